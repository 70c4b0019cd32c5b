// The flags the sweep and the power-loss cells share with every task (`--target --cells
// --legs --libraries --seed --jobs --json --quick`), their defaults, and the report file.
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { LegName } from "../../harness/legs.ts";
import { LEGS } from "../../harness/legs.ts";
import { REFERENCE_TARGET, type TierLibrary } from "../../runner/sweep/mod.ts";
import type { TierOutcome } from "../../runner/result.ts";
import { systemLibraryPath } from "../../session_db/sqlite/library.ts";
import { targetSpecifier } from "../../cells/target.ts";
import { checkTarget, fail, type FlagSpec, legListArg, type ParsedFlags } from "../_cli.ts";
import { resolveLibraries } from "../../runner/libraries.ts";
import { fixedSqlitePath } from "../../runner/sqlite_build.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The largest seed: the cells' seeds are 31-bit. */
export const MAX_SEED = 2 ** 31 - 1;

/** The shared flags, as every task's table spells them. */
export function commonFlags(json: string, cells: string): FlagSpec[] {
  return [
    {
      name: "--target",
      value: "MODULE",
      help: "the store's target module",
      default: "the reference store",
    },
    { name: "--cells", value: "LIST", help: "cells whose clauses to judge", default: cells },
    { name: "--legs", value: "LIST", help: "journal-mode legs", default: "default,delete,wal" },
    {
      name: "--libraries",
      value: "LIST",
      help: "SQLite libraries (system, fixed or a path; one process each)",
      default: "DENO_SQLITE_PATH when set, else system,fixed",
    },
    {
      name: "--seed",
      value: "N",
      help: "replay the random choices of a run",
      default: "random, printed",
    },
    { name: "--jobs", value: "N", help: "children in flight at once, 1 to 64", default: "2" },
    { name: "--json", value: "PATH", help: "the JSON report", default: json },
    { name: "--quick", help: "fewer states per run (the conformance front door's --quick)" },
  ];
}

/** What the shared flags say. */
export interface CommonArgs {
  target: string;
  cells?: number[];
  legs: LegName[];
  libraries: TierLibrary[];
  seed: number;
  jobs: number;
  json: string;
  quick: boolean;
}

function libraryOf(label: string): TierLibrary {
  if (label === "system") {
    const path = systemLibraryPath();
    if (!path) fail(`Cannot find the system libsqlite3: install it or use --libraries fixed`);
    return { label, path };
  }
  if (label === "fixed") return { label, path: fixedSqlitePath() };
  if (!label.includes("/")) {
    fail(`Unknown library "${label}": use system, fixed or a path to a SQLite shared library`);
  }
  return { label: resolve(label), path: resolve(label) };
}

/** The library `DENO_SQLITE_PATH` names, labelled system or fixed when it is one of those. */
function envLibrary(path: string): TierLibrary {
  const real = (p: string | undefined) => {
    try {
      return p ? Deno.realPathSync(p) : undefined;
    } catch {
      return undefined;
    }
  };
  const label = real(path) === real(systemLibraryPath())
    ? "system"
    : real(path) === real(fixedSqlitePath())
    ? "fixed"
    : path;
  return { label, path };
}

/** Parses the shared flags (a bad value is a usage error, exit 2, before anything runs). */
export async function commonArgs(
  flags: ParsedFlags,
  json: string,
  validCells: readonly number[],
): Promise<CommonArgs> {
  const target = targetSpecifier(flags.string("--target") ?? REFERENCE_TARGET);
  await checkTarget(target);
  const cells = flags.list("--cells")?.map((c) => {
    const n = Number(c);
    if (!validCells.includes(n)) fail(`Unknown cell "${c}": use ${validCells.join(", ")}`);
    return n;
  });
  if (cells && !cells.length) fail(`Invalid --cells: name some of ${validCells.join(", ")}`);
  const envLeg = Deno.env.get("SESSION_DB_JOURNAL_MODE");
  const legs = flags.has("--legs")
    ? legListArg(flags.string("--legs")!)
    : envLeg
    ? legListArg(envLeg)
    : [...LEGS];
  // The variable names the legs; this process's own opens pass the mode explicitly.
  Deno.env.delete("SESSION_DB_JOURNAL_MODE");
  if (Deno.env.get("SESSION_DB_CRASH_AT")) {
    fail("Cannot sweep: SESSION_DB_CRASH_AT is set (unset it; the sweep arms each child itself)");
  }
  const env = Deno.env.get("DENO_SQLITE_PATH");
  const wanted = flags.list("--libraries");
  let libraries: TierLibrary[];
  if (wanted) {
    const named = wanted.filter((l) => l === "system" || l === "fixed");
    libraries = [
      ...(await resolveLibraries(named)).libraries,
      ...wanted.filter((l) => l !== "system" && l !== "fixed").map(libraryOf),
    ];
  } else if (env) libraries = [envLibrary(env)];
  else libraries = (await resolveLibraries(["system", "fixed"])).libraries;
  if (!libraries.length) {
    fail("No SQLite library is available: install libsqlite3 or run deno task sqlite");
  }
  return {
    target,
    ...(cells ? { cells } : {}),
    legs,
    libraries,
    seed: flags.int("--seed", 0, MAX_SEED) ?? Math.floor(Math.random() * MAX_SEED),
    jobs: flags.int("--jobs", 1, 64) ?? 2,
    json: resolve(flags.string("--json") ?? join(ROOT, json)),
    quick: flags.has("--quick"),
  };
}

/** Writes the JSON report: the tier's run and every outcome, with the run's settings. */
export async function writeReport(
  path: string,
  args: CommonArgs,
  tier: TierOutcome,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(
    path,
    JSON.stringify(
      {
        date: new Date().toISOString(),
        target: args.target,
        seed: args.seed,
        legs: args.legs,
        libraries: args.libraries,
        ...extra,
        ...tier,
      },
      null,
      2,
    ) + "\n",
  );
}
