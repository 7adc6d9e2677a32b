import { generateKeyPairSync, randomBytes, sign } from "node:crypto";

/**
 * A throwaway TLS identity for the proxy: a self-signed ECDSA P-256
 * certificate for 127.0.0.1, made fresh for each run and trusted by nothing
 * but the kubeconfigs the proxy writes.
 *
 * Why TLS on loopback: client-go sends no credentials to a plain-HTTP server
 * (clientcmd reads a kubeconfig's user only when the transport is TLS), so
 * the run's bearer token, which is what keeps other local processes from
 * borrowing the cluster access through the proxy, needs an HTTPS proxy.
 * Node has no certificate builder, so the few DER structures of an X.509 v3
 * certificate are written here; the key and the signature come from
 * node:crypto.
 */
export interface ProxyCertificate {
  /** PEM certificate: the server's and, in the kubeconfig, the only trusted CA. */
  readonly cert: string;
  /** PEM PKCS#8 private key. */
  readonly key: string;
}

const OID = {
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  commonName: "2.5.4.3",
  subjectAltName: "2.5.29.17",
  basicConstraints: "2.5.29.19",
  keyUsage: "2.5.29.15",
  extKeyUsage: "2.5.29.37",
  serverAuth: "1.3.6.1.5.5.7.3.1",
};

/**
 * Makes a certificate for `ip` (default 127.0.0.1), valid from an hour ago
 * for `days`. The operator's webhook server serves one too
 * (src/webhooks/serving-certificate.ts), under another common name.
 */
export function createProxyCertificate(
  options: { ip?: string; days?: number; now?: Date; commonName?: string } = {},
): ProxyCertificate {
  const ip = options.ip ?? "127.0.0.1";
  const now = options.now ?? new Date();
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const name = sequence(
    set(sequence(oid(OID.commonName), utf8(options.commonName ?? "reconcile-conformance proxy"))),
  );
  const algorithm = sequence(oid(OID.ecdsaWithSha256));
  const notBefore = new Date(now.getTime() - 3_600_000);
  const notAfter = new Date(now.getTime() + (options.days ?? 7) * 86_400_000);
  const serial = randomBytes(16);
  // A positive INTEGER in minimal DER: top bit clear (not negative), next bit set (no leading zero).
  serial[0] = 0x40 | ((serial[0] ?? 0) & 0x3f);
  const extensions = sequence(
    extension(OID.subjectAltName, false, sequence(tagged(0x87, ipBytes(ip)))),
    // Self-signed and trusted directly as a root, so it is its own CA.
    extension(OID.basicConstraints, true, sequence(tlv(0x01, Buffer.from([0xff])))),
    // digitalSignature and keyCertSign.
    extension(OID.keyUsage, true, tlv(0x03, Buffer.from([0x02, 0x84]))),
    extension(OID.extKeyUsage, false, sequence(oid(OID.serverAuth))),
  );
  const tbs = sequence(
    tlv(0xa0, integer(Buffer.from([2]))), // version 3
    integer(serial),
    algorithm,
    name,
    sequence(utcTime(notBefore), utcTime(notAfter)),
    name,
    publicKey.export({ type: "spki", format: "der" }),
    tlv(0xa3, extensions),
  );
  const signature = sign("sha256", tbs, { key: privateKey, dsaEncoding: "der" });
  const certificate = sequence(tbs, algorithm, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  return {
    cert: pem("CERTIFICATE", certificate),
    key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

function tlv(tag: number, value: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), length(value.length), value]);
}

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const sequence = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const tagged = (tag: number, value: Buffer) => tlv(tag, value);
const utf8 = (text: string) => tlv(0x0c, Buffer.from(text, "utf8"));

function integer(value: Buffer): Buffer {
  return tlv(0x02, value);
}

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split(".").map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function utcTime(date: Date): Buffer {
  const iso = date.toISOString(); // 2026-11-29T19:50:05.123Z
  const text = `${iso.slice(2, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return tlv(0x17, Buffer.from(text, "ascii"));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), tlv(0x04, value));
}

function ipBytes(ip: string): Buffer {
  const parts = ip.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    throw new Error(`not an IPv4 address: ${ip}`);
  }
  return Buffer.from(parts);
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}
