import { skippedResult, withReference, type ScenarioResult, type Suite, type SuiteContext } from "./check.js";
import { childUpdateConflict, childUpdateOne, childUpdateTargets } from "./child-update-conflict.js";
import { statusUpdateConflict, statusUpdateOne } from "./status-update-conflict.js";

const CHECKS = [childUpdateConflict, statusUpdateConflict];

/**
 * Real 409s: the kit writes an object right before the operator's write of
 * it (an annotation on a child; the next spec update on the custom
 * resource), so a write based on the old read is refused by the API server
 * itself. The operator must re-read inside its retry, keep the other
 * writer's change and never report on a spec it has not acted on.
 */
export const conflict: Suite = {
  name: "conflict",
  checks: CHECKS,
  referencesNeeded(selected, updates) {
    return [
      ...(selected.has(childUpdateConflict.id) && updates >= 1 ? [1] : []),
      ...(selected.has(statusUpdateConflict.id) && updates >= 2 ? [2] : []),
    ];
  },
  async run(context: SuiteContext, selected): Promise<ScenarioResult[]> {
    const { updates } = context.deps.contract;
    const tasks: (() => Promise<ScenarioResult[]>)[] = [];

    if (selected.has(childUpdateConflict.id)) {
      tasks.push(async () => {
        if (updates.length === 0) {
          return [
            skippedResult(
              childUpdateConflict.id,
              "contract",
              "the contract has no update: nothing makes the operator write a child",
            ),
          ];
        }
        return withReference(context, 1, [childUpdateConflict], selected, async (reference) => {
          const targets = childUpdateTargets(reference, context.deps.contract.customResource);
          if (targets.length === 0) {
            return [
              skippedResult(
                childUpdateConflict.id,
                "update 1",
                "the reference updated no existing child for update 1: nothing to race with",
              ),
            ];
          }
          return context.sideBySide(targets, (target) => {
            context.progress(`a concurrent write before the operator's ${target.verb} of ${target.resource}`);
            return childUpdateOne(context, target, reference);
          });
        });
      });
    }

    if (selected.has(statusUpdateConflict.id)) {
      tasks.push(async () => {
        if (updates.length < 2) {
          return [
            skippedResult(
              statusUpdateConflict.id,
              "contract",
              `the contract has ${updates.length} update(s); this check needs two: the second races with the status write for the first`,
            ),
          ];
        }
        // One scenario, but it takes a slot like any other.
        return withReference(context, 2, [statusUpdateConflict], selected, (reference) =>
          context.sideBySide([reference], (r) => statusUpdateOne(context, r)),
        );
      });
    }
    // The two checks' scenarios share nothing but the cluster: both lists at once.
    return (await Promise.all(tasks.map((task) => task()))).flat();
  },
};
