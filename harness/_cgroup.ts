// A cgroup v2 directory per process tree: membership survives setsid, double forks and
// the death of every ancestor, cgroup.freeze stops the whole tree at once, cgroup.kill
// kills it at once (including processes forked while it runs). Files through libc.
import {
  type LibcSymbols,
  listDir,
  makeDir,
  readText,
  removeDir,
  sendSignal,
  SIGNALS,
  writeText,
} from "./_libc.ts";

/** mkdir's errno for an existing path. */
export const EEXIST = 17;

/**
 * The folder of the cgroup at hierarchy path `own` (by default this process's, read now)
 * in a mounted cgroup v2 hierarchy, or `undefined` when there is none (cgroup v1 only,
 * or not Linux).
 */
export function ownCgroupDir(
  c: LibcSymbols,
  own: string | undefined = ownCgroupPath(c),
): string | undefined {
  if (own === undefined) return undefined;
  for (const entry of readText(c, "/proc/self/mountinfo")?.split("\n") ?? []) {
    const [before, after] = entry.split(" - ");
    if (!after?.startsWith("cgroup2 ")) continue;
    const fields = before!.split(" ");
    const root = fields[3] ?? "/";
    const mount = fields[4];
    if (!mount) continue;
    // A mount of a sub-hierarchy (a cgroup namespace's view) holds only paths below its root.
    if (root !== "/" && own !== root && !own.startsWith(`${root}/`)) continue;
    const rel = root === "/" ? own : own.slice(root.length);
    return `${mount}${rel === "/" ? "" : rel}`;
  }
  return undefined;
}

/** The hierarchy-relative path of this process's cgroup (`/proc/self/cgroup`'s `0::`). */
export function ownCgroupPath(c: LibcSymbols): string | undefined {
  return readText(c, "/proc/self/cgroup")?.split("\n").find((l) => l.startsWith("0::"))?.slice(3);
}

/** One cgroup v2 directory. */
export class Cgroup {
  constructor(readonly c: LibcSymbols, readonly dir: string) {}

  /** Creates it (an existing one is fine); 0 or the errno. */
  create(): number {
    const error = makeDir(this.c, this.dir);
    return error === EEXIST ? 0 : error;
  }

  /** Creates it; 0, or the errno (`EEXIST` when it exists). */
  createNew(): number {
    return makeDir(this.c, this.dir);
  }

  /** Whether it offers what the trees need: freezing and killing the whole of it. */
  usable(): boolean {
    const names = listDir(this.c, this.dir) ?? [];
    return names.includes("cgroup.freeze") && names.includes("cgroup.kill");
  }

  /** Moves a process into it; 0 or the errno. */
  adopt(pid: number): number {
    return writeText(this.c, `${this.dir}/cgroup.procs`, String(pid));
  }

  /** The processes directly in it. */
  procs(): number[] {
    return (readText(this.c, `${this.dir}/cgroup.procs`) ?? "").split("\n").filter(Boolean)
      .map(Number);
  }

  /** The cgroups below it, deepest first. */
  descendants(): Cgroup[] {
    const out: Cgroup[] = [];
    for (const name of listDir(this.c, this.dir) ?? []) {
      if (name.includes(".")) continue; // control files; child cgroups have plain names
      const child = new Cgroup(this.c, `${this.dir}/${name}`);
      if (listDir(this.c, child.dir) === undefined) continue;
      out.push(...child.descendants(), child);
    }
    return out;
  }

  /** Every process in it and below. */
  allProcs(): number[] {
    return [this, ...this.descendants()].flatMap((group) => group.procs());
  }

  #event(name: string): boolean {
    const text = readText(this.c, `${this.dir}/cgroup.events`) ?? "";
    return text.split("\n").some((line) => line === `${name} 1`);
  }

  /** Whether any process is in it or below. */
  populated(): boolean {
    return this.#event("populated");
  }

  /** Whether every process in it and below is frozen. */
  frozen(): boolean {
    return this.#event("frozen");
  }

  /** Freezes it (and everything forked into it later); 0 or the errno. */
  freeze(): number {
    return writeText(this.c, `${this.dir}/cgroup.freeze`, "1");
  }

  /** Lets it run again (a process also stopped by SIGSTOP stays stopped); 0 or the errno. */
  thaw(): number {
    return writeText(this.c, `${this.dir}/cgroup.freeze`, "0");
  }

  /** SIGKILLs every process in it and below at once; 0 or the errno. */
  kill(): number {
    const error = writeText(this.c, `${this.dir}/cgroup.kill`, "1");
    if (error === 0) return 0;
    // A kernel without cgroup.kill (before 5.14): the frozen members one by one.
    for (const pid of this.allProcs()) sendSignal(this.c, pid, SIGNALS.SIGKILL);
    return error;
  }

  /** Removes it and the cgroups below (each must be empty); 0 or the first errno. */
  remove(): number {
    let first = 0;
    for (const group of [...this.descendants(), this]) {
      const error = removeDir(this.c, group.dir);
      if (error && !first) first = error;
    }
    return first;
  }
}
