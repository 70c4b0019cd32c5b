// A small scanner over the store's TypeScript source, enough to find the mutation sites
// the generator needs: the extent of a call's arguments (brackets matched, strings,
// template literals and comments skipped), the string literals in it, and the top-level
// conjuncts of a SQL WHERE clause. It throws on anything it cannot delimit, so that a
// refactor of the store fails the generator loudly instead of shrinking the set.

/** A site in a source file: `[start, end)` offsets. */
export interface Span {
  /** The first offset. */
  start: number;
  /** One past the last offset. */
  end: number;
}

const CLOSING: Record<string, string> = { "(": ")", "{": "}", "[": "]" };

function skipQuoted(src: string, at: number): number {
  const quote = src[at];
  for (let i = at + 1; i < src.length; i++) {
    if (src[i] === "\\") i++;
    else if (src[i] === quote) return i + 1;
    else if (src[i] === "\n") break;
  }
  throw new Error(`Cannot scan the store's source: unterminated string at offset ${at}`);
}

function skipTemplate(src: string, at: number): number {
  for (let i = at + 1; i < src.length;) {
    if (src[i] === "\\") i += 2;
    else if (src[i] === "`") return i + 1;
    else if (src[i] === "$" && src[i + 1] === "{") i = matchBracket(src, i + 1);
    else i++;
  }
  throw new Error(`Cannot scan the store's source: unterminated template at offset ${at}`);
}

/**
 * The offset just past the bracket that closes the one at `open`.
 *
 * @param src The source.
 * @param open The offset of `(`, `{` or `[`.
 * @returns One past the matching closing bracket.
 */
export function matchBracket(src: string, open: number): number {
  const stack: string[] = [];
  for (let i = open; i < src.length;) {
    const c = src[i]!;
    if (c === '"' || c === "'") i = skipQuoted(src, i);
    else if (c === "`") i = skipTemplate(src, i);
    else if (c === "/" && src[i + 1] === "/") i = src.indexOf("\n", i);
    else if (c === "/" && src[i + 1] === "*") i = src.indexOf("*/", i) + 2;
    else {
      if (c in CLOSING) stack.push(CLOSING[c]!);
      else if (c === ")" || c === "}" || c === "]") {
        if (stack.pop() !== c) break;
        if (!stack.length) return i + 1;
      }
      i++;
    }
    if (i <= 0) break;
  }
  throw new Error(`Cannot scan the store's source: unbalanced bracket at offset ${open}`);
}

/** A string literal: its span (quotes included) and its text (without them). */
export interface Literal extends Span {
  /** The text between the quotes. */
  text: string;
}

/**
 * The string literal starting at `at` (a `"`, `'` or template literal).
 *
 * @param src The source.
 * @param at Its opening quote.
 * @returns The literal.
 */
export function literalAt(src: string, at: number): Literal {
  const end = src[at] === "`" ? skipTemplate(src, at) : skipQuoted(src, at);
  return { start: at, end, text: src.slice(at + 1, end - 1) };
}

/** One conjunct of a WHERE clause, with its span inside the SQL text. */
export interface Conjunct extends Span {
  /** Its text. */
  text: string;
  /** The column it tests (its first identifier). */
  column: string;
}

/**
 * The top-level `AND` conjuncts of the WHERE clause of an UPDATE or DELETE.
 *
 * @param sql The statement.
 * @returns The conjuncts, spans relative to `sql`.
 * @throws When the statement has no WHERE, or a clause this scanner does not delimit.
 */
export function whereConjuncts(sql: string): Conjunct[] {
  const where = /\bWHERE\b/i.exec(sql);
  if (!where) throw new Error(`Cannot mutate "${oneLine(sql)}": it has no WHERE clause`);
  const from = where.index + where[0].length;
  const clause = sql.slice(from);
  if (/\b(ORDER|LIMIT|RETURNING|GROUP)\b|\$\{|;/i.test(clause)) {
    throw new Error(`Cannot mutate "${oneLine(sql)}": its WHERE clause is not a plain conjunction`);
  }
  const out: Conjunct[] = [];
  let depth = 0;
  let start = from;
  const push = (end: number) => {
    const raw = sql.slice(start, end);
    const lead = raw.length - raw.trimStart().length;
    const text = raw.trim();
    const column = /^\(?\s*([A-Za-z_][A-Za-z0-9_]*)/.exec(text)?.[1];
    if (!text || !column) throw new Error(`Cannot mutate "${oneLine(sql)}": an empty conjunct`);
    out.push({ start: start + lead, end: start + lead + text.length, text, column });
  };
  for (let i = from; i < sql.length; i++) {
    const c = sql[i];
    if (c === "'") {
      i = sql.indexOf("'", i + 1);
      if (i < 0) throw new Error(`Cannot mutate "${oneLine(sql)}": an unterminated string`);
    } else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (depth === 0) {
      const and = /^\s+AND\s+/i.exec(sql.slice(i));
      if (and && /\s/.test(c ?? "")) {
        push(i);
        start = i + and[0].length;
        i = start - 1;
      }
    }
  }
  push(sql.length);
  return out;
}

/**
 * A statement on one line, for messages.
 *
 * @param sql The statement.
 * @returns Its words joined by single spaces.
 */
export function oneLine(sql: string): string {
  return sql.replace(/\s+/g, " ").trim();
}

/**
 * The name of the function or method declared nearest before `at`.
 *
 * @param src The source.
 * @param at An offset inside it.
 * @returns The name.
 */
export function enclosingFunction(src: string, at: number): string {
  const before = src.slice(0, at);
  const pattern = /^(?:export )?function (\w+)|^ {2}(?:static )?(\w+)\([^)]*\)?[^\n]*\{$/gm;
  let name: string | undefined;
  for (const match of before.matchAll(pattern)) name = match[1] ?? match[2];
  if (!name) throw new Error(`Cannot find the function around offset ${at}`);
  return name;
}
