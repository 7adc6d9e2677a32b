import { readdir, readFile, readlink } from "node:fs/promises";
import { endianness } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { KWOK_PORT_OPTIONS, type KwokPorts, type KwokProvider } from "../../src/cluster/kwok-provider.js";
import { KubeClient } from "../../src/kube/kube-client.js";
import { isProcessAlive } from "../../src/process/process-table.js";
import { kwokProvider, uniqueClusterName } from "../support/kwok-cluster.js";

// Clusters on one machine at once: created together they must not collide on
// a port, and each must be reachable from this machine only.

const providers: KwokProvider[] = [];

afterAll(async () => {
  // A failed test leaves clusters running; delete every one, then report failures.
  const results = await Promise.allSettled(providers.map((provider) => provider.delete()));
  const failures: unknown[] = [];
  for (const result of results) if (result.status === "rejected") failures.push(result.reason);
  if (failures.length > 0) throw new AggregateError(failures, "deleting the clusters failed");
});

function newProvider(prefix: string): KwokProvider {
  const provider = kwokProvider(uniqueClusterName(prefix));
  providers.push(provider);
  return provider;
}

/** The control plane's processes, as kwokctl records them: `pids/<component>.pid`. */
const COMPONENTS = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok-controller"];

/** Ports each component must listen on, by the configuration option that sets them. */
const PORTS_OF: Record<string, readonly (keyof KwokPorts)[]> = {
  etcd: ["etcdPort", "etcdPeerPort"],
  "kube-apiserver": ["kubeApiserverPort"],
  "kube-controller-manager": ["kubeControllerManagerPort"],
  "kube-scheduler": ["kubeSchedulerPort"],
  "kwok-controller": ["kwokControllerPort"],
};

async function componentPid(provider: KwokProvider, component: string): Promise<number> {
  const text = await readFile(join(provider.clusterDir, "pids", `${component}.pid`), "utf8");
  return Number.parseInt(text.trim(), 10);
}

/** The options kwokctl saved for the cluster (its `kwok.yaml`): what it actually ran with. */
async function savedOptions(provider: KwokProvider): Promise<Record<string, unknown>> {
  const documents = parseAllDocuments(await readFile(join(provider.clusterDir, "kwok.yaml"), "utf8"));
  for (const document of documents) {
    const value: unknown = document.toJS();
    if (typeof value !== "object" || value === null || !("kind" in value) || !("options" in value)) continue;
    if (
      value.kind === "KwokctlConfiguration" &&
      typeof value.options === "object" &&
      value.options !== null
    ) {
      return Object.fromEntries(Object.entries(value.options));
    }
  }
  throw new Error(`no KwokctlConfiguration in ${provider.clusterDir}/kwok.yaml`);
}

interface ListeningSocket {
  readonly address: string;
  readonly port: number;
}

/**
 * Every listening TCP socket on the machine by inode, from /proc/net/tcp and
 * tcp6 (no tool to install). A component told to bind 0.0.0.0 shows up in
 * tcp6 as `::` (Go listens dual-stack), so both files matter.
 */
async function listeningSockets(): Promise<Map<string, ListeningSocket>> {
  const sockets = new Map<string, ListeningSocket>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const text = await readFile(file, "utf8").catch(() => "");
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [local, state, inode] = [fields[1], fields[3], fields[9]];
      if (local === undefined || inode === undefined || state !== "0A") continue; // 0A: LISTEN
      const [hexAddress = "", hexPort = ""] = local.split(":");
      sockets.set(inode, { address: decodeAddress(hexAddress), port: Number.parseInt(hexPort, 16) });
    }
  }
  return sockets;
}

/** /proc/net prints an address as 32-bit words in host byte order. */
function decodeAddress(hex: string): string {
  const bytes: number[] = [];
  for (let word = 0; word < hex.length; word += 8) {
    const wordBytes = (hex.slice(word, word + 8).match(/../g) ?? []).map((pair) => Number.parseInt(pair, 16));
    bytes.push(...(endianness() === "LE" ? wordBytes.reverse() : wordBytes));
  }
  if (bytes.length === 4) return bytes.join(".");
  const groups: string[] = [];
  for (let index = 0; index < bytes.length; index += 2) {
    groups.push((((bytes[index] ?? 0) << 8) | (bytes[index + 1] ?? 0)).toString(16));
  }
  // The URL parser writes the canonical short form ("::", "::1"), in brackets.
  return new URL(`http://[${groups.join(":")}]/`).hostname.slice(1, -1);
}

/** The listening sockets among a process's open files. */
async function listeningSocketsOf(
  pid: number,
  all: Map<string, ListeningSocket>,
): Promise<ListeningSocket[]> {
  const fdDir = `/proc/${pid}/fd`;
  const found: ListeningSocket[] = [];
  for (const fd of await readdir(fdDir)) {
    const target = await readlink(join(fdDir, fd)).catch(() => "");
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    const socket = inode === undefined ? undefined : all.get(inode);
    if (socket) found.push(socket);
  }
  return found;
}

describe("kwok clusters side by side", () => {
  it("creates three clusters at the same moment: all come up, on distinct ports, and all go away", async () => {
    const three = [newProvider("rc-side"), newProvider("rc-side"), newProvider("rc-side")];
    const accesses = await Promise.all(three.map((provider) => provider.create()));

    for (const access of accesses) {
      const client = KubeClient.fromKubeconfig(access.kubeconfigPath, access.context);
      try {
        expect((await client.getRaw("/readyz")).status).toBe(200);
        expect(await client.list("v1", "Node")).toHaveLength(1);
      } finally {
        client.close();
      }
    }
    expect(new Set(accesses.map((access) => access.apiServerUrl)).size).toBe(3);
    const ports = (await Promise.all(three.map(savedOptions))).flatMap((options) =>
      KWOK_PORT_OPTIONS.map((option) => options[option]),
    );
    expect(ports.every((port) => typeof port === "number" && port > 0)).toBe(true);
    expect(new Set(ports).size).toBe(3 * KWOK_PORT_OPTIONS.length);

    const pids = (await Promise.all(three.map((provider) => provider.processIds()))).flat();
    expect(pids).toHaveLength(3 * COMPONENTS.length);
    expect(pids.every(isProcessAlive)).toBe(true);
    await Promise.all(three.map((provider) => provider.delete()));
    expect(pids.filter(isProcessAlive)).toEqual([]);
  }, 300_000);

  it("runs every component listening on 127.0.0.1 only, on the ports the kit reserved", async () => {
    const provider = newProvider("rc-loopback");
    await provider.create();
    const options = await savedOptions(provider);
    const all = await listeningSockets();

    for (const component of COMPONENTS) {
      const sockets = await listeningSocketsOf(await componentPid(provider, component), all);
      expect(sockets.length, `${component} listens somewhere`).toBeGreaterThan(0);
      expect(
        sockets.filter((socket) => socket.address !== "127.0.0.1"),
        `${component}: sockets not on 127.0.0.1`,
      ).toEqual([]);
      const reserved = (PORTS_OF[component] ?? []).map((option) => options[option]);
      expect(
        sockets.map((socket) => socket.port),
        `${component} on its reserved ports`,
      ).toEqual(expect.arrayContaining(reserved));
    }
    expect(options.bindAddress).toBe("127.0.0.1");
    await provider.delete();
  });
});
