// One isolate of harness/testdata/isolates.ts: waits at the shared start line, sets up
// its run scope with the others at once, and posts what a tree of it would be told.
import { prepareTree, TREE_ENV } from "../process_tree.ts";

self.onmessage = (event: MessageEvent<SharedArrayBuffer>) => {
  const start = new Int32Array(event.data);
  Atomics.add(start, 1, 1);
  Atomics.wait(start, 0, 0, 10_000);
  const setup = prepareTree();
  const guard = setup.env[TREE_ENV];
  self.postMessage(guard ? JSON.parse(guard) : {});
  self.close();
};
