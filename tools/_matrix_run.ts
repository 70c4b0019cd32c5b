// The matrix's machinery, shared by `deno task matrix` and `deno task conformance`: the
// SQLite libraries, one `deno test` child per leg × library running the cells, and the
// rows read back from the cells' reports (CELLS_REPORT_DIR).
import { loadTarget } from "../cells/target.ts";
import { declaredPermissions } from "../cells/target_access.ts";
import { widenedFlags } from "../harness/permissions.ts";
import { exists } from "../internal/fs.ts";
import { fail, LEG_PERMISSIONS, legChildEnv } from "./_cli.ts";
import { fileURLToPath } from "node:url";
import { basename, join } from "node:path";
import type { LegName } from "../harness/legs.ts";
import { systemLibraryPath } from "../session_db/sqlite/library.ts";
import { buildFixedSqlite, fixedSqlitePath } from "./build_sqlite.ts";
import { type CellReport, type CellStatus, readCellReports } from "../cells/cell_report.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** A SQLite library a leg runs on. */
export interface Library {
  /** `system` or `fixed`. */
  label: string;
  /** The shared library's path. */
  path: string;
}

/** One leg on one library. */
export interface LegRun {
  /** The library. */
  library: Library;
  /** The journal-mode leg. */
  leg: LegName;
}

/** One cell on one leg × library. */
export interface Row {
  /** The cell (0: the test run itself failed). */
  cell: number;
  /** Its title. */
  title: string;
  /** The leg. */
  leg: LegName;
  /** The library's label. */
  library: string;
  /** The SQLite version the leg ran. */
  sqliteVersion: string;
  /** The outcome. */
  status: CellStatus;
  /** One line: the figures of a PASS, the reason of a FAIL or SKIP. */
  detail: string;
  /** A FAIL's failed checks, each with what was expected and what was found. */
  checks?: string[];
  /** A FAIL's or SKIP's whole reason (children's stderr included). */
  reason?: string;
  /** Where the evidence was kept. */
  evidence?: string;
  /** The run's seed (`CELLS_SEED` replays its random choices). */
  seed?: number;
}

/**
 * A target that cannot be found or loaded, or whose `childPermissions` is bad, is one
 * usage error naming it (not a FAIL row per cell and leg). Returns the flags the target's
 * children get beyond the narrow scope (its `childPermissions`), for the tool to print.
 */
export async function checkTarget(target: string): Promise<string[]> {
  if (target.startsWith("file:") && !exists(fileURLToPath(target))) {
    fail(`Cannot find the target module ${fileURLToPath(target)}: check the --target path`);
  }
  try {
    await loadTarget(target);
    // A bad childPermissions is a usage error too.
    return widenedFlags(await declaredPermissions(target));
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
}

/** The wanted libraries that are available (building the fixed one when allowed). */
export async function resolveLibraries(
  wanted: readonly string[],
  build: boolean,
  tool = "matrix",
): Promise<Library[]> {
  const out: Library[] = [];
  if (wanted.includes("system")) {
    const system = systemLibraryPath();
    if (system) out.push({ label: "system", path: system });
    else console.error(`${tool}: no system libsqlite3 found; skipping the system library`);
  }
  if (wanted.includes("fixed")) {
    let path: string | undefined = fixedSqlitePath();
    try {
      await Deno.stat(path);
    } catch {
      if (build) {
        console.error(`${tool}: building the fixed SQLite first (deno task sqlite)…`);
        try {
          path = await buildFixedSqlite();
        } catch (error) {
          console.error(`${tool}: ${(error as Error).message}; skipping the fixed library`);
          path = undefined;
        }
      } else {
        console.error(`${tool}: ${path} is not built (deno task sqlite); skipping it`);
        path = undefined;
      }
    }
    if (path) out.push({ label: "fixed", path });
  }
  return out;
}

async function runLeg(
  run: LegRun,
  testFile: string,
  reportDir: string,
  extra: Record<string, string>,
): Promise<{ code: number; output: string; seconds: number }> {
  const env = legChildEnv(run.library.path, run.leg, { CELLS_REPORT_DIR: reportDir, ...extra });
  const started = performance.now();
  const output = await new Deno.Command(Deno.execPath(), {
    // --unstable-kv: a target on Deno KV (targets/deno_kv.ts) is opened here too, to check.
    args: ["test", "--unstable-kv", ...LEG_PERMISSIONS, testFile],
    cwd: ROOT,
    clearEnv: true,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  return { code: output.code, output: text, seconds: (performance.now() - started) / 1000 };
}

/** A reason on one line: each failed check and the child's first stderr lines, in order. */
export function oneLine(reason: string, limit = 600): string {
  const lines = reason.split("\n").map((line) => line.trim()).filter((line) => line);
  const text = lines.join(" | ");
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

/** A FAIL or SKIP reason on one line, without the `Failed check(s):` heading. */
export function reasonLine(reason: string | undefined): string {
  return oneLine((reason ?? "").replace(/^Failed check\(s\):\n/, ""));
}

/** The failed checks of a FAIL reason (`Failed check(s):` then one per line). */
function checksOf(reason: string): string[] {
  const [head, ...rest] = reason.split("\n");
  return head?.startsWith("Failed check(s):") ? rest.filter((line) => line.trim()) : [reason];
}

function detailOf(report: CellReport): string {
  if (report.status !== "PASS") {
    return reasonLine(report.reason);
  }
  const f = report.figures;
  const parts: string[] = [];
  if (f.onDiskMode) parts.push(`on-disk ${f.onDiskMode}`);
  if (f.acknowledged !== undefined) parts.push(`ack ${f.acknowledged}`);
  if (f.recovered !== undefined) parts.push(`recovered ${f.recovered}`);
  if (f["random kill.acknowledged"] !== undefined) {
    parts.push(`rotations ack ${f["random kill.acknowledged"]}`);
  }
  const randomKill = f["random kill"] as { acknowledged?: number } | undefined;
  if (randomKill?.acknowledged !== undefined) parts.push(`steps ack ${randomKill.acknowledged}`);
  if (Array.isArray(f.crashPoints)) parts.push(`${f.crashPoints.length} crash points`);
  if (Array.isArray(f.killPoints)) parts.push(`${f.killPoints.length} kill points × 2 transports`);
  if (Array.isArray(f.exitCodes)) parts.push(`exits ${f.exitCodes.join(",")}`);
  return parts.join(", ");
}

/**
 * The rows of one leg: one per cell report, a FAIL for each requested cell that reported
 * nothing, and a FAIL for a test run that exited non-zero with no failing cell.
 */
export function legRows(
  run: LegRun,
  reports: readonly CellReport[],
  cells: readonly number[],
  result: { code: number; output: string },
): Row[] {
  const rows: Row[] = reports.map((r) => ({
    cell: r.cell,
    title: r.title,
    leg: run.leg,
    library: run.library.label,
    sqliteVersion: r.sqliteVersion,
    status: r.status,
    detail: detailOf(r),
    ...(r.status === "FAIL" && r.reason ? { checks: checksOf(r.reason) } : {}),
    ...(r.reason ? { reason: r.reason } : {}),
    ...(r.evidence ? { evidence: r.evidence } : {}),
    ...(typeof r.figures.seed === "number" ? { seed: r.figures.seed } : {}),
  }));
  const tail = () => oneLine(result.output.trim().split("\n").slice(-12).join("\n"));
  for (const cell of cells) {
    if (!rows.some((r) => r.cell === cell)) {
      rows.push({
        cell,
        title: "(no report)",
        leg: run.leg,
        library: run.library.label,
        sqliteVersion: "?",
        status: "FAIL",
        detail: `the test run reported nothing for this cell (exit ${result.code}): ${tail()}`,
        reason: result.output,
      });
    }
  }
  // A cell that ran but found the leg not honoured reports SKIP and fails its test (so
  // `deno test` cannot show it green): those failures are the SKIPs, not a broken run.
  const failedTests = Number(result.output.match(/\| (\d+) failed \|/)?.[1] ?? NaN);
  const lateSkips = (result.output.match(/SKIP, not evidence: /g) ?? []).length;
  const onlyLateSkips = failedTests > 0 && failedTests <= lateSkips &&
    reports.filter((r) => r.status === "SKIP").length >= failedTests;
  if (result.code !== 0 && !onlyLateSkips && !rows.some((r) => r.status === "FAIL")) {
    rows.push({
      cell: 0,
      title: "test run",
      leg: run.leg,
      library: run.library.label,
      sqliteVersion: "?",
      status: "FAIL",
      detail: `deno test exited ${result.code}: ${tail()}`,
      reason: result.output,
    });
  }
  return rows;
}

/** Options of {@linkcode runMatrix}. */
export interface MatrixRunOptions {
  /** The target specifier. */
  target: string;
  /** The cells. */
  cells: readonly number[];
  /** The legs × these libraries. */
  legs: readonly LegName[];
  /** The libraries. */
  libraries: readonly Library[];
  /** Legs run at once. */
  jobs: number;
  /** Extra environment of every leg's child (evidence folder, deadlines, span). */
  env: Record<string, string>;
  /** Where the cells' attachments (plots) are copied, if anywhere. */
  attachDir?: string;
  /** Called once per finished leg with its rows and wall time. */
  onLeg?(run: LegRun, rows: Row[], seconds: number): void;
}

/**
 * Runs the cells on every leg × library, each in its own `deno test` child (the project's
 * deno.json excludes `.cache/` from test discovery, so the generated test file lives in a
 * temporary folder).
 *
 * @returns Every row and the attachments kept.
 */
export async function runMatrix(
  options: MatrixRunOptions,
): Promise<{ rows: Row[]; attachments: string[] }> {
  const testDir = await Deno.makeTempDir({ prefix: "matrix-" });
  const testFile = join(testDir, "matrix_test.ts");
  const cellsMod = new URL("../cells/mod.ts", import.meta.url).href;
  await Deno.writeTextFile(
    testFile,
    `import { registerCells } from ${JSON.stringify(cellsMod)};\n` +
      `await registerCells({ target: ${JSON.stringify(options.target)}, cells: ${
        JSON.stringify(options.cells)
      } });\n`,
  );
  const runs: LegRun[] = options.libraries.flatMap((library) =>
    options.legs.map((leg) => ({ library, leg }))
  );
  const rows: Row[] = [];
  const attachments: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < runs.length) {
      const run = runs[next++]!;
      const reportDir = await Deno.makeTempDir({ dir: testDir, prefix: "report-" });
      const result = await runLeg(run, testFile, reportDir, options.env);
      const read = await readCellReports(reportDir);
      if (options.attachDir) {
        // The cells' plots and other attachments go beside the JSON report.
        for (const path of read.attachments) {
          await Deno.mkdir(options.attachDir, { recursive: true });
          const kept = join(options.attachDir, `${run.library.label}-${basename(path)}`);
          await Deno.copyFile(path, kept);
          attachments.push(kept);
        }
      }
      await Deno.remove(reportDir, { recursive: true });
      const these = legRows(run, read.reports, options.cells, result);
      rows.push(...these);
      options.onLeg?.(run, these, result.seconds);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(options.jobs, runs.length) }, worker));
  } finally {
    await Deno.remove(testDir, { recursive: true }).catch(() => {});
  }
  const order = (r: Row) =>
    r.cell * 100 + options.legs.indexOf(r.leg) * 10 +
    options.libraries.findIndex((l) => l.label === r.library);
  rows.sort((a, b) => order(a) - order(b));
  return { rows, attachments };
}

/**
 * The requested legs that no library exercised (every cell of the leg SKIPPED, or no
 * library ran it), each with why: said out loud, and a failure under `--strict`.
 */
export function unexercisedLegs(
  legs: readonly LegName[],
  wanted: readonly string[],
  libraries: readonly Library[],
  rows: readonly Row[],
): { leg: LegName; why: string }[] {
  const missing = wanted.filter((label) => !libraries.some((l) => l.label === label));
  return legs.flatMap((leg) => {
    const these = rows.filter((r) => r.leg === leg);
    if (these.some((r) => r.status !== "SKIP")) return [];
    const reasons = [
      ...missing.map((label) => `the ${label} library is not available`),
      ...[...new Set(these.map((r) => `${r.library}: ${(r.reason ?? r.detail).split("\n")[0]}`))],
    ];
    return [{ leg, why: reasons.join("; ") || "no library ran it" }];
  });
}

/** A plain-text table of the rows. */
export function table(rows: readonly Row[]): string {
  const head = ["cell", "leg", "library", "SQLite", "result", "detail"];
  const body = rows.map((r) => [
    `${r.cell} ${r.title}`,
    r.leg,
    r.library,
    r.sqliteVersion,
    r.status,
    r.detail,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...body.map(line)].join("\n");
}
