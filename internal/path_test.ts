import assert from "node:assert/strict";
import { dirname as nodeDirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { dirname, fromFileUrl, toFileUrl } from "./path.ts";

Deno.test("dirname matches node:path's on this platform", () => {
  const paths = [
    "",
    ".",
    "..",
    "a",
    "a/",
    "a/b",
    "a/b/",
    "a//b",
    "a/b//",
    "/",
    "//",
    "/a",
    "/a/",
    "/a/b",
    "/a/b.db",
    "/a//b",
    "./a",
    "../a/b",
    "/tmp/run-1/store.db",
  ];
  if (Deno.build.os === "windows") {
    paths.push("C:", "C:\\", "C:\\a", "C:\\a\\b", "C:a", "C:a\\b", "\\a\\b", "a\\b\\", "C:/a/b");
  }
  for (const path of paths) assert.equal(dirname(path), nodeDirname(path), `dirname("${path}")`);
});

Deno.test("fromFileUrl matches node:url's fileURLToPath, errors included", () => {
  const urls = [
    "file:///tmp/a.db",
    "file:///tmp/with%20space/a%23b.db",
    "file:///tmp/%C3%A9t%C3%A9.db",
    "file:///",
    "file://localhost/tmp/a.db",
    new URL("./x y.ts", "file:///work/"),
    "file:///tmp/a%2Fb.db",
    "http://example.com/a.db",
  ];
  if (Deno.build.os === "windows") urls.push("file:///C:/a/b.db", "file://server/share/a.db");
  else urls.push("file://server/share/a.db");
  for (const url of urls) {
    let expected: string | undefined;
    try {
      expected = fileURLToPath(url);
    } catch {
      expected = undefined;
    }
    if (expected === undefined) {
      assert.throws(() => fromFileUrl(url), TypeError, `fromFileUrl("${url}") must throw`);
    } else assert.equal(fromFileUrl(url), expected, `fromFileUrl("${url}")`);
  }
});

Deno.test("toFileUrl matches node:url's pathToFileURL, and fromFileUrl reads it back", () => {
  const paths = [
    "/tmp/a.db",
    "/",
    "/tmp/Store Dir #1, ü/target.ts",
    "/tmp/100%/a?b.ts",
    "/tmp/%20 and %2F/a.ts",
    "/tmp/tab\there/line\nbreak\r.ts",
    '/tmp/back\\slash/[x]{y}`z`<a>"q"\';^|.ts',
  ];
  if (Deno.build.os === "windows") paths.splice(0, paths.length, "C:\\a\\b #1.ts", "C:\\");
  for (const path of paths) {
    assert.equal(toFileUrl(path).href, pathToFileURL(path).href, `toFileUrl("${path}")`);
    assert.equal(fromFileUrl(toFileUrl(path)), path, `fromFileUrl(toFileUrl("${path}"))`);
  }
  assert.throws(() => toFileUrl("relative/a.ts"), /Cannot make a file URL of "relative\/a\.ts"/);
});
