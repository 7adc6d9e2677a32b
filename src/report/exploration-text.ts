import type { ExplorationReport } from "./report-model.js";

/**
 * What spec exploration did, in lines a person reads after the verdicts:
 * how many updates it made up and chose (budget, seed), what the API server
 * refused and why, the fields left alone and the fields whose change showed
 * nowhere. The console and the job summary print the same lines.
 */
export function explorationLines(exploration: ExplorationReport): string[] {
  const { max, seed, candidates, chosen, refused, leftAlone } = exploration;
  if (exploration.baseRefused !== undefined) {
    return [
      `spec exploration made nothing up: the API server refused the spec it starts from in a dry run: ${exploration.baseRefused}`,
    ];
  }
  return [
    `spec exploration: ${chosen.length} generated update(s) from ${candidates} candidate(s) the schema allowed (at most ${max}, seed ${seed}: \`--seed\` and \`--generated-updates\` choose others); differential/update-equals-creation judged each`,
    ...refused.map((r) => `dropped before use: ${r.update}: ${r.reason}`),
    ...(exploration.unchecked ?? []).map((u) => `not checked in a dry run: ${u}`),
    ...leftAlone.map((f) => `left alone: ${f.field}: ${f.why}`),
    ...(exploration.noEffect ?? []).map(
      (update) =>
        `no visible effect: ${update}: no child and no status field changed (a note, not a verdict: a field may be meant for later, or for the operand only)`,
    ),
  ];
}
