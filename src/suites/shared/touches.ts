import { describeError } from "../../errors.js";
import type { ObjectRef } from "../../kube/kube-client.js";
import { describeRef } from "../../scenario/reference-state.js";
import { Inconclusive, type Scenario } from "../../scenario/scenario.js";

/** The label the kit touches objects with: metadata only, so it changes nothing an operator manages. */
export const TOUCH_LABEL = "reconcile-conformance.dev/touch";

/**
 * Sets the kit's foreign label on one object (a merge patch through the
 * kit's writer: a change of metadata only, and a watch event). A refusal
 * leaves nothing to judge: Inconclusive.
 */
export async function touch(scenario: Scenario, ref: ObjectRef, value: string): Promise<void> {
  try {
    await scenario.kit.patch(
      {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        metadata: { name: ref.name, namespace: ref.namespace, labels: { [TOUCH_LABEL]: value } },
      },
      { type: "merge" },
    );
  } catch (error) {
    throw new Inconclusive(
      `the API server refused the kit's touch of ${describeRef(ref)}: ${describeError(error)}`,
    );
  }
}
