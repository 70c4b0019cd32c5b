import { ok } from "node:assert/strict";
import { Activity } from "./activity.ts";

/** Waits `ms` on the clock the activity reads. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* the clock only */ }
}

Deno.test("a watched measure moves the run only when its value changes", () => {
  const activity = new Activity();
  let acks = 0;
  const progress = activity.watch(() => acks);
  progress();
  spin(30);
  progress();
  ok(activity.quietMs() >= 30, "an unchanged value moved the run");
  acks = 1;
  progress();
  ok(activity.quietMs() < 30, "a changed value did not move the run");
});

Deno.test("a mark moves the run", () => {
  const activity = new Activity();
  spin(30);
  ok(activity.quietMs() >= 30);
  activity.mark();
  ok(activity.quietMs() < 30);
});
