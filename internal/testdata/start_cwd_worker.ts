// Posts the START_CWD an isolate loading the module after the process moved reads.
import { START_CWD } from "../start_cwd.ts";

(self as unknown as Worker).postMessage(START_CWD);
self.close();
