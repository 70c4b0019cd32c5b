// Child for the library-not-found test: loads SQLite and prints its version; on
// failure prints `<error name>: <message>` on stderr and exits 1.
import { sqliteVersion } from "../database.ts";

try {
  console.log(sqliteVersion());
} catch (error) {
  console.error(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  Deno.exit(1);
}
