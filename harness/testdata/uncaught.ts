// Logs a few lines, then dies of an uncaught error: the parent's one-line description must
// lead with the error, not the log.
console.error("[store] opening");
console.error("[store] open");
throw new TypeError("Do not know how to serialize a BigInt");
