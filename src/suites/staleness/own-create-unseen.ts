import { randomBytes } from "node:crypto";
import type { WatchFaultProof } from "../../proxy/watch-faults.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import { describeRef, liveChildObjects, writeEvidence } from "../../scenario/reference-state.js";
import type { Scenario } from "../../scenario/scenario.js";
import { forWantOfChildren } from "../shared/no-children.js";
import { defineCheck, type Judgement, type ObserveContext } from "../check.js";
import { compareAfterFault, unsureAfterFault } from "../shared/after-fault.js";
import { untilNothingLeft } from "../shared/fault-wait.js";
import { touch } from "../shared/touches.js";
import {
  allowedByPromises,
  childKinds,
  holdNotes,
  losses,
  specReference,
  TOUCH_REACTION_MS,
  type ChildKind,
  type StaleViewEnd,
} from "./stale-views.js";

/** Reconciles the kit asks for (label touches of the custom resource) while a child's events are held. */
const TOUCHES = 3;

export interface OwnCreateUnseenObservation {
  /** The kind of child whose events were held (its plural resource). */
  readonly resource: string;
  /** What the hold took, and delivered on its release. */
  readonly released: WatchFaultProof;
  /** The touches of the custom resource made while the events were held. */
  readonly touches: number;
  /** The end state after the release; `made`: the creates of the held kind before the touches. */
  readonly end: StaleViewEnd;
  /** The operator's writes from its first create of the held kind on. */
  readonly writes: readonly WriteEntry[];
  readonly operatorLog: readonly string[];
}

/**
 * One scenario per kind of the reference's children: every event of that
 * kind in the scenario's namespace is held from the operator's watches from
 * the start, so the operator never sees its own creates of that kind; the
 * kit touches the custom resource (a foreign label: a reconcile each) and
 * gives it time to act on its stale cache; then everything held is
 * delivered, in order, and it must converge to the reference with the
 * children it first made.
 */
export const ownCreateUnseen = defineCheck<ChildKind, OwnCreateUnseenObservation>({
  id: "staleness/own-create-unseen",
  level: "MUST",
  summary:
    "while the events of a kind of child it creates are kept from its watch, further reconciles duplicate nothing and delete nothing, and it ends as the reference",
  references: () => [0],
  targets({ references }) {
    const kinds = childKinds(references.get(0)?.children ?? []);
    return kinds.length > 0
      ? kinds
      : {
          target: "children",
          skip: forWantOfChildren(
            references.get(0),
            "the operator created no child on its way to the reference",
          ),
        };
  },
  targetName: (kind) => kind.resource,
  observer: {
    scenario: "unseen",
    scenarioOf: (kind) => `unseen-${kind.resource}`,
    async observe(context, kind) {
      context.progress(`holding ${kind.resource} events from the operator's watch`);
      const reference = specReference(context, 0);
      const scenario = await context.open();
      const hold = scenario.proxy.armWatch({
        mode: "hold",
        group: kind.group,
        resource: kind.resource,
        match: { namespace: scenario.namespace },
      });
      let released: WatchFaultProof | undefined;
      try {
        await scenario.startWithSample();
        const ofKind = (e: WriteEntry) =>
          e.group === kind.group && e.resource === kind.resource && !e.subresource;
        await untilNothingLeft(
          context,
          scenario,
          `create of a ${kind.resource} child with its events held`,
          () =>
            Promise.resolve([
              ...(scenario.operatorWrites({ effect: "created" }).some(ofKind)
                ? []
                : [`a ${kind.resource} create`]),
              ...(hold.held().length > 0 ? [] : ["a held event"]),
            ]),
        );
        const firstCreated = scenario.operatorWrites({ effect: "created" }).filter(ofKind);
        const touches = await touchCustomResource(context, scenario);
        released = hold.release();

        context.progress(
          `released ${released.taken.length} held ${kind.resource} event(s); waiting for convergence`,
        );
        await scenario.converge("convergence after the release");
        const live = await liveChildObjects(scenario);
        return {
          resource: kind.resource,
          released,
          touches,
          end: {
            reference: reference.children,
            ...(reference.roles ? { roles: reference.roles } : {}),
            live,
            made: firstCreated,
            deletes: scenario.operatorWrites({ effect: "deleted" }),
          },
          writes: scenario.operatorWrites({ after: (firstCreated[0]?.seq ?? 1) - 1 }),
          operatorLog: await scenario.operatorLog(10),
        };
      } finally {
        if (!released) hold.release();
      }
    },
  },
  judge({ resource, released, touches, end, writes, operatorLog }, contract): Judgement {
    const { comparison, volatile } = compareAfterFault(end.live, end.reference, contract, {
      ...(end.roles ? { roles: end.roles } : {}),
      writes,
    });
    const { problems, excused } = losses(contract, end, comparison);
    const evidence = {
      writes: writes.map(writeEvidence),
      ...(comparison.diffs.length > 0 ? { diffs: comparison.diffs } : {}),
      notes: [
        ...holdNotes(released, resource, touches),
        ...problems,
        ...excused,
        ...volatile,
        ...comparison.clockMade,
      ],
    };
    if (problems.length > 0) {
      return {
        status: "failed",
        message: `while its own ${resource} were unseen and ${touches} reconcile(s) were asked for: ${problems.join("; ")}`,
        evidence: { ...evidence, operatorLog },
      };
    }
    const unsure = unsureAfterFault(comparison, evidence);
    if (unsure) return unsure;
    return {
      status: "passed",
      message: `with its ${resource} events held (${released.taken.length} event(s)) through ${touches} touch(es) of the custom resource, it duplicated nothing, deleted nothing${allowedByPromises(excused)} and converged to the reference`,
      evidence,
    };
  },
});

/** Touches the custom resource with a foreign label TOUCHES times, each given time to wake a reconcile. */
async function touchCustomResource(context: ObserveContext, scenario: Scenario): Promise<number> {
  const cr = scenario.customResource;
  for (let i = 1; i <= TOUCHES; i++) {
    context.progress(`touch ${i} of ${TOUCHES} of ${describeRef(cr)}`);
    await touch(scenario, cr, randomBytes(4).toString("hex"));
    await new Promise((resolve) => setTimeout(resolve, TOUCH_REACTION_MS));
  }
  return TOUCHES;
}
