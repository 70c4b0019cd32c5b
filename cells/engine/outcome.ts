// What a cell leaves behind: its report (CELLS_REPORT_DIR) and its evidence file, both
// naming what the store really ran on (never a library it did not load), and the text of
// a FAIL (its failed checks, then the cause and fix of each known pattern).
import { join } from "node:path";
import type { Leg } from "../../harness/legs.ts";
import type { CellReport, Diagnosis, SkipKind, Status, StoreEngine } from "./report.ts";
import { diagnosisLines } from "./diagnoses.ts";

/** `cell<id>-<leg>-<stem>`: the name of a report and of the files beside it. */
export function reportName(cell: number, leg: string, stem: string): string {
  return `cell${cell}-${leg}-${stem}`;
}

/**
 * The library and version a report names: the leg's for this project's binding, `own`
 * and the file's last writer for a store on its own SQLite, `none` for a store on no
 * SQLite, `unknown` for a store that did not open.
 */
export function libraryOf(
  leg: Leg,
  engine: StoreEngine,
): { library: string; sqliteVersion: string } {
  switch (engine.kind) {
    case "binding":
      return { library: leg.library, sqliteVersion: leg.sqliteVersion };
    case "own-sqlite":
      return { library: "own", sqliteVersion: engine.sqliteVersion ?? "unknown" };
    case "not-sqlite":
      return { library: "none", sqliteVersion: "none" };
    default:
      return { library: "unknown", sqliteVersion: "unknown" };
  }
}

/** What evidence.json says the store ran on: the engine, and a library only if loaded. */
export function engineEvidence(leg: Leg, engine: StoreEngine): Record<string, unknown> {
  return {
    engine,
    ...(engine.kind === "binding"
      ? { library: leg.library, sqliteVersion: leg.sqliteVersion }
      : engine.sqliteVersion
      ? { sqliteVersion: engine.sqliteVersion }
      : {}),
  };
}

/** What one report adds to the cell's fixed fields. */
export interface ReportFields {
  reason?: string;
  skipKind?: SkipKind;
  figures?: Record<string, unknown>;
  evidence?: string | undefined;
  checks?: string[];
  diagnoses?: Diagnosis[];
}

/** Where a cell ran: the fields every report of the cell shares. */
export interface ReporterFields {
  target: string;
  leg: Leg;
  engine: StoreEngine;
  /** The target children's permission flags beyond the narrow scope. */
  widened: string[];
}

/** Writes a cell's reports: the fields every report of the cell shares, fixed once. */
export class CellReporter {
  readonly #base: Omit<CellReport, "status" | "figures">;
  readonly #cell: number;
  readonly #leg: string;
  /** The stem of this cell's report files (`reportName`). */
  readonly stem: string = crypto.randomUUID().slice(0, 8);

  constructor(cell: { id: number; title: string }, fields: ReporterFields) {
    const { target, leg, engine, widened } = fields;
    this.#cell = cell.id;
    this.#leg = leg.name;
    this.#base = {
      cell: cell.id,
      title: cell.title,
      target,
      leg: leg.name,
      ...libraryOf(leg, engine),
      engine,
      ...(widened.length ? { childPermissions: widened } : {}),
    };
  }

  /** Writes the report when `CELLS_REPORT_DIR` is set. */
  write(status: Status, fields: ReportFields = {}): void {
    const dir = Deno.env.get("CELLS_REPORT_DIR");
    if (!dir) return;
    const report: CellReport = {
      ...this.#base,
      status,
      ...(fields.reason ? { reason: fields.reason } : {}),
      ...(fields.skipKind ? { skipKind: fields.skipKind } : {}),
      ...(fields.checks?.length ? { checks: fields.checks } : {}),
      ...(fields.diagnoses?.length ? { diagnoses: fields.diagnoses } : {}),
      figures: fields.figures ?? {},
      ...(fields.evidence ? { evidence: fields.evidence } : {}),
    };
    Deno.mkdirSync(dir, { recursive: true });
    const name = `${reportName(this.#cell, this.#leg, this.stem)}.json`;
    Deno.writeTextFileSync(join(dir, name), JSON.stringify(report, null, 2) + "\n");
  }

  /** Writes an attachment beside the report when `CELLS_REPORT_DIR` is set. */
  attach(name: string, text: string): void {
    const dir = Deno.env.get("CELLS_REPORT_DIR");
    if (!dir) return;
    Deno.mkdirSync(dir, { recursive: true });
    Deno.writeTextFileSync(
      join(dir, `${reportName(this.#cell, this.#leg, this.stem)}.${name}`),
      text,
    );
  }
}

/** A failed check: its one-line text, what it threw, and whether the suite (not the store) failed. */
export interface FailedCheck {
  line: string;
  error: unknown;
  harness: boolean;
}

/** A FAIL's text: its failed checks, then one line per diagnosis. */
export function failureText(
  checks: readonly FailedCheck[],
  diagnoses: readonly Diagnosis[],
): string {
  return [
    "Failed check(s):",
    ...checks.map((f) => f.line),
    ...diagnosisLines(diagnoses),
  ].join("\n");
}

/**
 * A cell's FAIL: its text, and the failed checks, diagnoses and evidence folder as data,
 * so that whoever runs the definition (`runDefinitions`) reads them without parsing text.
 * Wrapping another error (its `cause`), it keeps that error's message and stack.
 */
export class CellFailure extends Error {
  /** The failed checks, one line each. */
  readonly checks: string[];
  /** The known patterns recognised in them. */
  readonly diagnoses: Diagnosis[];
  /** Where the evidence was kept, once it was. */
  evidence?: string;

  constructor(
    message: string,
    outcome: { checks: string[]; diagnoses: Diagnosis[] },
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "CellFailure";
    this.checks = outcome.checks;
    this.diagnoses = outcome.diagnoses;
    if (options?.cause instanceof Error && options.cause.stack) this.stack = options.cause.stack;
  }
}
