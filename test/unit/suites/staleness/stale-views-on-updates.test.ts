import { describe, expect, it } from "vitest";
import { throughUpdate, losses } from "../../../../src/suites/staleness/stale-views.js";
import { compareAfterFault } from "../../../../src/suites/shared/after-fault.js";
import { exampleContract, service, serviceCreate, serviceDelete } from "./staleness-fixtures.js";

// What a stale view on the way to an update may cost (stale-views.ts, throughUpdate): what the
// update itself removes or replaces is the update's, never the fault's; anything else it deleted is.

const path = (replaced: string[] = []) => ({ spec: 2, name: "update 2", replaced });

describe("a stale view on the way to an update: what counts", () => {
  it("counts a delete of a child the updated spec keeps, as a loss", async () => {
    const contract = await exampleContract();
    const end = {
      reference: [service("web", "u-ref"), service("db", "u-ref-db")],
      live: [service("web", "u-1"), service("db", "u-3")],
      made: [serviceCreate(2, "web", "u-1"), serviceCreate(3, "db", "u-2")],
      deletes: [serviceDelete(9, "db", "u-2")],
    };
    const through = throughUpdate(end, path());
    const { comparison } = compareAfterFault(end.live, end.reference, contract, { writes: [] });
    const { problems } = losses(contract, through.end, comparison);
    expect(problems).toEqual([
      "services/db was recreated (uid u-2 -> u-3)",
      "it deleted services/db (write 9, uid u-2)",
    ]);
    expect(through.notes).toEqual([]);
  });

  it("does not count what the update replaces or removes, and names each in a note", async () => {
    const contract = await exampleContract();
    const end = {
      // The updated spec keeps web (replaced on the way, as its reference did) and has no db.
      reference: [service("web", "u-ref")],
      live: [service("web", "u-4")],
      made: [serviceCreate(2, "web", "u-1"), serviceCreate(3, "db", "u-2")],
      deletes: [serviceDelete(9, "web", "u-1"), serviceDelete(10, "db", "u-2")],
    };
    const through = throughUpdate(end, path(["services/web"]));
    const { comparison } = compareAfterFault(end.live, end.reference, contract, { writes: [] });
    expect(losses(contract, through.end, comparison).problems).toEqual([]);
    expect(through.notes).toEqual([
      "not counted as recreated: services/web: the reference deleted services/web on its way to update 2 too",
      "not counted as lost: services/db: the reference of update 2 has no services/db (the update removes it)",
    ]);
  });

  it("changes nothing on the sample's creation (no path)", () => {
    const end = {
      reference: [service("web", "u-ref")],
      live: [service("web", "u-1")],
      made: [serviceCreate(2, "web", "u-1")],
      deletes: [serviceDelete(9, "web", "u-0")],
    };
    expect(throughUpdate(end, undefined)).toEqual({ end, notes: [] });
  });
});
