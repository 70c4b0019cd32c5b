import { strictEqual } from "node:assert/strict";
import { createHash } from "node:crypto";
import { sha256Hex } from "./sha256.ts";

Deno.test("sha256Hex matches the standard vectors and node:crypto", () => {
  strictEqual(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  strictEqual(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  for (const length of [1, 55, 56, 63, 64, 65, 119, 120, 1000]) {
    const text = "é".repeat(length) + String(length);
    strictEqual(
      sha256Hex(text),
      createHash("sha256").update(text).digest("hex"),
      `length ${length}`,
    );
  }
});
