import { describe, expect, it } from "vitest";
import {
  childOfRole,
  fits,
  scenarioSubstitutions,
  learnRoles,
  roleKey,
  roleOf,
  templateOf,
  writeKey,
  type Life,
  type LifeChild,
} from "../../../src/scenario/child-roles.js";
import { isPerLife, lifeValue, maskPerLife } from "../../../src/scenario/life-values.js";
import { writeEntry } from "../../support/write-entry.js";

const UID_A = "1a2b3c4d-0000-4000-8000-00000000000a";
const UID_B = "9f8e7d6c-0000-4000-8000-00000000000b";

function child(
  kind: string,
  name: string,
  extra: Record<string, unknown> = {},
  namespace = "ns-a",
): LifeChild {
  const resource = `${kind.toLowerCase()}s`;
  return {
    kind,
    group: kind === "Deployment" ? "apps" : "",
    resource,
    name,
    object: { kind, metadata: { name, namespace }, ...extra },
  };
}

const life = (namespace: string, children: LifeChild[]): Life => ({ namespace, children });

describe("templateOf", () => {
  it.each([
    // [first life, second life, prefix, suffix, length, alphabet]
    ["orders-auth-1a2b3c4d", "orders-auth-9f8e7d6c", "orders-auth-", "", 8, "hex"],
    // Chance shares a first digit: it belongs to the varying part, not the fixed text.
    ["orders-auth-1a2b3c4d", "orders-auth-1f8e7d6c", "orders-auth-", "", 8, "hex"],
    ["web-5d8f2-config", "web-c41e9-config", "web-", "-config", 5, "hex"],
    ["web-x7k2p", "web-q9zzm", "web-", "", 5, "alnum"],
    // A varying part that can hold anything gives back what chance shared, up to a separator.
    ["job-ab.c1-run", "job-ax.z9-run", "job-", "-run", 5, "any"],
    ["cache-k_ey1.x", "cache-k_ab2.x", "cache-k_", ".x", 3, "alnum"],
  ] as const)("%s and %s", (a, b, prefix, suffix, length, alphabet) => {
    expect(templateOf(a, b)).toEqual({ prefix, suffix, length, alphabet });
  });

  it("gives none when one name holds the other", () => {
    expect(templateOf("web", "web-1")).toBeUndefined();
  });

  it("fits names of its shape only", () => {
    const template = templateOf("orders-auth-1a2b3c4d", "orders-auth-9f8e7d6c");
    if (!template) throw new Error("no template");
    expect(fits(template, "orders-auth-00ff00ff")).toBe(true);
    expect(fits(template, "orders-auth-00ff00f")).toBe(false);
    expect(fits(template, "orders-auth-zzzzzzzz")).toBe(false);
    expect(fits(template, "orders-web-00ff00ff")).toBe(false);
  });
});

describe("learnRoles", () => {
  it("keeps a name that is the same in both lives as its own role, full UIDs normalised", () => {
    const roles = learnRoles(
      life("ns-a", [child("Service", "web"), child("ConfigMap", `registration-${UID_A}`)]),
      life("ns-b", [child("Service", "web"), child("ConfigMap", `registration-${UID_B}`)]),
    );
    expect(roles.roles.map((r) => r.key)).toEqual(["Service/web", "ConfigMap/registration-<uid>"]);
    expect(roles.unpaired).toEqual([]);
    expect(roleKey(roles, "ConfigMap", "registration-00000000-1111-4222-8333-444444444444")).toBe(
      "ConfigMap/registration-<uid>",
    );
  });

  it("learns how a name derived from the owner's identity varies, and pairs the next life's by it", () => {
    const roles = learnRoles(
      life("ns-a", [child("Service", "web"), child("Secret", "orders-auth-1a2b3c4d")]),
      life("ns-b", [child("Service", "web"), child("Secret", "orders-auth-9f8e7d6c")]),
    );
    expect(roles.roles.map((r) => r.key)).toEqual(["Service/web", "Secret/orders-auth-*"]);
    const third = roleOf(roles, "Secret", "orders-auth-55aa55aa");
    expect(third.status === "role" && third.role.names).toEqual([
      "orders-auth-1a2b3c4d",
      "orders-auth-9f8e7d6c",
    ]);
    expect(writeKey(roles, { group: "", resource: "secrets", name: "orders-auth-55aa55aa" })).toBe(
      "secrets/orders-auth-*",
    );
    // A name of another shape has no role: it keys by itself.
    expect(roleOf(roles, "Secret", "orders-token")).toEqual({
      status: "unknown",
      key: "Secret/orders-token",
    });
  });

  it("pairs two varying names of one kind by the text they share", () => {
    const roles = learnRoles(
      life("ns-a", [child("Secret", "db-1a2b3c4d"), child("Secret", "cache-5e6f7a8b")]),
      life("ns-b", [child("Secret", "cache-99887766"), child("Secret", "db-44332211")]),
    );
    expect(roles.roles.map((r) => r.key).sort()).toEqual(["Secret/cache-*", "Secret/db-*"]);
  });

  it("leaves names it cannot pair one to one unpaired, and a scenario's child of them has no role", () => {
    const roles = learnRoles(
      life("ns-a", [child("Secret", "a1b2c3"), child("Secret", "d4e5f6")]),
      life("ns-b", [child("Secret", "0f0f0f"), child("Secret", "f0f0f0")]),
    );
    expect(roles.roles).toEqual([]);
    expect(roles.unpaired).toHaveLength(1);
    expect(roles.unpaired[0]?.why).toContain("share no fixed text");
  });

  it("takes the fixed text of a child created with generateName from its create, separator or not", () => {
    // "webx7k2p" and "webxq9zm" share "webx": by their names alone the fixed text would be lost.
    const created = (name: string, generateName: string) =>
      writeEntry({
        verb: "create",
        group: "",
        resource: "secrets",
        name,
        generateName,
        code: 201,
        effect: "created",
      });
    const generated = (namespace: string, names: [string, string]): Life => ({
      namespace,
      children: [child("Secret", names[0]), child("Secret", names[1])],
      writes: [created(names[0], "web"), created(names[1], "cache")],
    });
    const roles = learnRoles(
      generated("ns-a", ["webx7k2p", "cachebq4s2"]),
      generated("ns-b", ["webxq9zm", "cachezz8k1"]),
    );
    expect(roles.roles.map((r) => [r.key, r.template?.length])).toEqual([
      ["Secret/web*", 5],
      ["Secret/cache*", 5],
    ]);
    expect(roleKey(roles, "Secret", "webm2n4b")).toBe("Secret/web*");
    expect(roleOf(roles, "Secret", "cachem2n4b").status).toBe("role");
    expect(roleOf(roles, "Secret", "other12345").status).toBe("unknown");
    expect(writeKey(roles, { group: "", resource: "secrets", name: "webm2n4b" })).toBe("secrets/web*");
  });

  it("leaves a kind with more varying names in one life than in the other unpaired", () => {
    const roles = learnRoles(
      life("ns-a", [child("Secret", "s-1a2b3c4d"), child("Secret", "s-00000000")]),
      life("ns-b", [child("Secret", "s-9f8e7d6c")]),
    );
    expect(roles.unpaired[0]?.why).toBe(
      "2 Secret(s) named differently in one reference life and 1 in the other",
    );
  });

  it("marks values that differ between the lives as generated once per life, and only those", () => {
    const roles = learnRoles(
      life("ns-a", [
        child("Secret", "orders-auth-1a2b3c4d", { data: { password: "NTdj", user: "YWRtaW4=" } }, "ns-a"),
        child("Deployment", "web", {
          spec: {
            replicas: 1,
            // The namespace and the Secret's life-dependent name read the same in both lives.
            template: { spec: { containers: [{ env: [{ value: "orders-auth-1a2b3c4d.ns-a" }] }] } },
          },
        }),
      ]),
      life("ns-b", [
        child("Secret", "orders-auth-9f8e7d6c", { data: { password: "Nzy4", user: "YWRtaW4=" } }, "ns-b"),
        child(
          "Deployment",
          "web",
          {
            spec: {
              replicas: 1,
              template: { spec: { containers: [{ env: [{ value: "orders-auth-9f8e7d6c.ns-b" }] }] } },
            },
          },
          "ns-b",
        ),
      ]),
    );
    const perLife = Object.fromEntries(roles.roles.map((r) => [r.key, r.perLife]));
    expect(perLife).toEqual({ "Deployment/web": [], "Secret/orders-auth-*": [["data", "password"]] });
  });
});

describe("childOfRole", () => {
  const roles = learnRoles(
    life("ns-a", [child("Secret", "orders-auth-1a2b3c4d")]),
    life("ns-b", [child("Secret", "orders-auth-9f8e7d6c")]),
  );
  const here = (name: string) => ({ ref: { kind: "Secret", name } });

  it("finds this scenario's child of the reference's role", () => {
    expect(
      childOfRole(roles, [here("other"), here("orders-auth-00112233")], "Secret", "orders-auth-1a2b3c4d"),
    ).toEqual(here("orders-auth-00112233"));
  });

  it("says ambiguous when two children have the role", () => {
    expect(
      childOfRole(
        roles,
        [here("orders-auth-00112233"), here("orders-auth-44556677")],
        "Secret",
        "orders-auth-1a2b3c4d",
      ),
    ).toBe("ambiguous");
  });
});

describe("values generated once per life", () => {
  const env = ["spec", "template", "spec", "containers", 0, "env"];
  const generated = [[...env, 0, "value"]];

  it("counts a path as per-life at or inside a generated value, not a list that merely holds one", () => {
    expect(isPerLife(generated, [...env, 0, "value"])).toBe(true);
    expect(isPerLife([["data"]], ["data", "password"])).toBe(true);
    expect(isPerLife(generated, env)).toBe(false);
    expect(isPerLife(generated, [...env, 1, "value"])).toBe(false);
  });

  it("masks the generated parts of a value and leaves the rest, and paths the value lacks, alone", () => {
    const value = {
      spec: { template: { spec: { containers: [{ env: [{ value: "p1" }, { value: "info" }] }] } } },
    };
    expect(maskPerLife(value, [...generated, ["spec", "missing", "x"], [...env, 5, "value"]])).toEqual({
      spec: {
        template: {
          spec: { containers: [{ env: [{ value: "<generated once per life>" }, { value: "info" }] }] },
        },
      },
    });
  });

  it("reads a life-dependent name in values the same in every life, a full UID in it too", () => {
    const name = (uid: string, suffix: string) => `orders-${uid}-${suffix}`;
    const roles = learnRoles(
      life("ns-a", [child("Secret", name(UID_A, "x7k2p"))]),
      life("ns-b", [child("Secret", name(UID_B, "q9zzm"))]),
    );
    expect(roles.roles[0]?.key).toBe("Secret/orders-<uid>-*");
    const read = (uid: string, suffix: string, namespace: string) =>
      lifeValue(
        { data: { ref: `${name(uid, suffix)}.${namespace}` } },
        namespace,
        scenarioSubstitutions(roles, [{ kind: "Secret", name: name(uid, suffix) }]),
      );
    expect(read(UID_A, "x7k2p", "ns-a")).toEqual({
      data: { ref: "<Secret/orders-<uid>-*>.<namespace>" },
      metadata: {},
    });
    expect(read(UID_B, "q9zzm", "ns-b")).toEqual(read(UID_A, "x7k2p", "ns-a"));
  });
});
