import { randomBytes } from "node:crypto";
import type { WatchFaultProof } from "../../proxy/watch-faults.js";
import type { WriteEntry } from "../../proxy/write-log.js";
import { describeRef, liveChildObjects, writeEvidence } from "../../scenario/reference-state.js";
import type { Scenario } from "../../scenario/scenario.js";
import { forWantOfChildren } from "../shared/no-children.js";
import { defineCheck, type Judgement, type ObserveContext, type TargetContext } from "../check.js";
import { unsureAfterFault } from "../shared/after-fault.js";
import { faultedSpecs, updatePathLines, walkToUpdate, type FaultPath } from "../shared/update-paths.js";
import type { ChildRoles } from "../../scenario/child-roles.js";
import type { ReferenceChild } from "../../scenario/spec-references.js";
import { untilNothingLeft } from "../shared/fault-wait.js";
import { touch } from "../shared/touches.js";
import {
  allowedByPromises,
  childKinds,
  holdNotes,
  judgedEnd,
  specReference,
  TOUCH_REACTION_MS,
  type ChildKind,
  type StaleViewEnd,
} from "./stale-views.js";

/** Reconciles the kit asks for (label touches of the custom resource) while a child's events are held. */
const TOUCHES = 3;

/**
 * A kind of child whose events are held: from the start for the sample's
 * creation, or, on the way to an update whose reference creates or deletes
 * children of that kind (`path`), from just before the update.
 */
export type UnseenTarget = ChildKind & {
  readonly path?: FaultPath;
  /** With a path: the children of the updated spec's reference, and its roles. */
  readonly reference?: readonly ReferenceChild[];
  readonly roles?: ChildRoles;
  readonly learnedFrom?: readonly ReferenceChild[];
};

/** "services", or "update 2: services". */
function unseenName({ resource, path }: UnseenTarget): string {
  return path ? `${path.name}: ${resource}` : resource;
}

/**
 * The kinds of child whose creates or deletes the budget's lines on the way
 * to each update reach (updatePathLines), one target each per update. Pure.
 */
export function unseenOnUpdates(context: TargetContext): UnseenTarget[] {
  const targets = new Map<string, UnseenTarget>();
  for (const { line, path, reference, roles, learnedFrom } of updatePathLines(context)) {
    const { group, resource, effect, subresource } = line.write;
    if (subresource || (effect !== "created" && effect !== "deleted")) continue;
    if (
      group === context.contract.customResource.group &&
      resource === context.contract.customResource.resource
    )
      continue;
    const key = `${path.spec} ${resource}.${group}`;
    if (targets.has(key)) continue;
    targets.set(key, {
      group,
      resource,
      names: [],
      path,
      reference,
      ...(roles ? { roles } : {}),
      learnedFrom,
    });
  }
  return [...targets.values()];
}

export interface OwnCreateUnseenObservation {
  /** The kind of child whose events were held (its plural resource). */
  readonly resource: string;
  /** The update whose way the hold was on; absent: the sample's creation. */
  readonly path?: FaultPath;
  readonly learnedFrom?: readonly ReferenceChild[];
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
export const ownCreateUnseen = defineCheck<UnseenTarget, OwnCreateUnseenObservation>({
  id: "staleness/own-create-unseen",
  level: "MUST",
  summary:
    "while the events of a kind of child it creates are kept from its watch, further reconciles duplicate nothing and delete nothing, and it ends as the reference",
  references: (contract) => [0, ...faultedSpecs(contract)],
  targets(context) {
    const kinds: UnseenTarget[] = [
      ...childKinds(context.references.get(0)?.children ?? []),
      ...unseenOnUpdates(context),
    ];
    const { references } = context;
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
  targetName: unseenName,
  observer: {
    scenario: "unseen",
    scenarioOf: (kind) =>
      kind.path ? `unseen-s${kind.path.spec}-${kind.resource}` : `unseen-${kind.resource}`,
    async observe(context, kind) {
      const { path } = kind;
      const zero = specReference(context, 0);
      const reference = path
        ? { children: kind.reference ?? [], ...(kind.roles ? { roles: kind.roles } : {}) }
        : zero;
      const scenario = await context.open();
      const progress = (text: string) => context.progress(text);
      // On an update's way, the hold starts once the spec before it has converged, seen whole.
      const update = path && (await walkToUpdate(scenario, context.contract, path.spec, progress));
      const from = scenario.proxy.writeLog.lastSeq;
      context.progress(
        `holding ${kind.resource} events from the operator's watch${path ? ` on the way to ${path.name}` : ""}`,
      );
      const hold = scenario.proxy.armWatch({
        mode: "hold",
        group: kind.group,
        resource: kind.resource,
        match: { namespace: scenario.namespace },
      });
      let released: WatchFaultProof | undefined;
      try {
        await (update ? update() : scenario.startWithSample());
        // On an update's way, its own creates and deletes of the kind are what it must not need to see.
        const ofKind = (e: WriteEntry) =>
          e.group === kind.group && e.resource === kind.resource && !e.subresource && e.seq > from;
        const own = () =>
          scenario
            .operatorWrites({ after: from })
            .filter(
              (e) => ofKind(e) && (e.effect === "created" || (path !== undefined && e.effect === "deleted")),
            );
        await untilNothingLeft(
          context,
          scenario,
          `${path ? "create or delete" : "create"} of a ${kind.resource} child with its events held`,
          () =>
            Promise.resolve([
              ...(own().length > 0 ? [] : [`a ${kind.resource} ${path ? "create or delete" : "create"}`]),
              ...(hold.held().length > 0 ? [] : ["a held event"]),
            ]),
        );
        const firstCreated = path
          ? scenario
              .operatorWrites({ effect: "created" })
              .filter((e) => !e.subresource && e.seq <= (own()[0]?.seq ?? from))
          : scenario.operatorWrites({ effect: "created" }).filter(ofKind);
        const firstOwn = own()[0]?.seq ?? from + 1;
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
            // On an update's way, its own first create or delete of the kind is the update's.
            deletes: scenario.operatorWrites({ effect: "deleted", ...(path ? { after: firstOwn } : {}) }),
          },
          writes: scenario.operatorWrites({ after: (path ? firstOwn : (firstCreated[0]?.seq ?? 1)) - 1 }),
          operatorLog: await scenario.operatorLog(10),
          ...(path ? { path, learnedFrom: kind.learnedFrom ?? zero.children } : {}),
        };
      } finally {
        if (!released) hold.release();
      }
    },
  },
  judge(observation, contract): Judgement {
    const { resource, released, touches, writes, operatorLog, path } = observation;
    const { comparison, volatile, problems, excused, update } = judgedEnd(observation, contract);
    const evidence = {
      writes: writes.map(writeEvidence),
      ...(comparison.diffs.length > 0 ? { diffs: comparison.diffs } : {}),
      notes: [
        ...holdNotes(released, resource, touches),
        ...problems,
        ...excused,
        ...update,
        ...volatile,
        ...comparison.clockMade,
      ],
    };
    if (problems.length > 0) {
      return {
        status: "failed",
        message: `while its own ${resource} were unseen${path ? ` on the way to ${path.name}` : ""} and ${touches} reconcile(s) were asked for: ${problems.join("; ")}`,
        evidence: { ...evidence, operatorLog },
      };
    }
    const unsure = unsureAfterFault(comparison, evidence);
    if (unsure) return unsure;
    return {
      status: "passed",
      message: `with its ${resource} events held (${released.taken.length} event(s)) through ${touches} touch(es) of the custom resource, it duplicated nothing, deleted nothing${allowedByPromises(excused)} and converged to the reference${path ? ` of ${path.name}` : ""}`,
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
