import assert from "node:assert/strict";
import { dirname as nodeDirname } from "node:path";
import { fileURLToPath } from "node:url";
import { dirname, fromFileUrl } from "./path.ts";

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
