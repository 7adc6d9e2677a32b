import { describe, expect, it } from "vitest";
import { readTarGzMember, readZipMember } from "../../../src/tools/archive-readers.js";

// Made with GNU tar 1.34 from a directory laid out like etcd's release
// (etcd-v3.6.16-linux-amd64/{Documentation/<120-character name>.md,etcd,etcdctl}):
// `tar --format=gnu -czf` (long names as ././@LongLink entries) and
// `tar --format=pax -czf` (long names as pax path records).
const GNU_TAR_GZ =
  "H4sIAAAAAAAAA+3WTW6DMBAFYK97Cl8AGOMftl1kySUcQBUq2BI1VXv7QpQNSAmRkoAa3rcxkpEGeXgDVSjK6FvGJhYmamrX/0S2LY1KDr7o28oFG2rvEnYPGmRan9bBfD1dCy1JpiSJBCNhUq0Y13dVvVH/FWzHOeu8D9fuW9r/p+IkTt5z7z7y2n0+qcbYYKPUxf6nSk7eBRLCUMp4/qTnmdh5/6vb8m83Erfl1if02tbo/1L+ifR0/kuRkWGc1jiAnee/GUb/29YPAZu5mP9x40E1FvMv1Oz/Tw0r8r+Gsc38WDvb/WIM7NDV/BeheUSN5fxns/xrwvd/Hec2YwQAAAAAAAAAAAAAALyQPxerHCUAKAAA";
const PAX_TAR_GZ =
  "H4sIAAAAAAAAA+2ZS26DMBCGWecUXACw8asssuuiy17BBdQi8aiIqejta6qmAlLekdOI+RbYaGwN1vD7xyJWYeR8EJe7mDtpkle1I7OIU+9Z1k+xjOLy5D0WYZXFuZIqKXJrOUjDKf1uNf0WYV9YmBFEfET0nYUwZ5xYdr0i12Kqk5KlfhQTuf4hfmBnKsniIxYBR5hxLFx9eaA4CA46KC+D7DcYDs689bKAmcRD+u+I3tuUo9G4YGxQ/02/q389mlo2u9IaRznrvywKNTZuKt5f3J0ws/4tN5CLmdr/KSLd+hPk+xj2fxNg4dvvUr0dZ74Iy6t/HdwsOoBXXR8TZZ/SP0Ksp3/d45ZtRJM73//TIn/dtwL2zaD+W47fjNmSY/n5j3IB/m+EPz2VibWeep5562UBMxnU/1bRt5j0f0x7+mdch8H/DdCU2X5Jcll+gmh3yFz/D1W6Osdy/2dEUPB/E4D/75tR/98i+hbT/n/x/4fA+d8MP2WGTwAAAAAAAAAA2AFfNfz5sQAoAAA=";
// Made with Info-ZIP 3.0 like etcd's darwin archives (`zip -q`), plus one
// stored entry (`zip -0`) and an archive comment (`zip -z`): etcd deflated
// (761 bytes, "etcd darwin binary " x 40 and a newline), etcdctl stored ("ctl\n").
const ZIP =
  "UEsDBBQAAAAIALMpfl3c+I96HQAAAPkCAAAeABwAZXRjZC12My42LjE2LWRhcndpbi1hcm02NC9ldGNkVVQJAAMBBg1rAQYNa3V4CwABBAAAAAAEAAAAAEstSU5RSEksKs/MU0jKzEssqlRIHRUaFRruQlwAUEsDBAoAAAAAALMpfl3IirJyBAAAAAQAAAAhABwAZXRjZC12My42LjE2LWRhcndpbi1hcm02NC9ldGNkY3RsVVQJAAMBBg1rAQYNa3V4CwABBAAAAAAEAAAAAGN0bApQSwECHgMUAAAACACzKX5d3PiPeh0AAAD5AgAAHgAYAAAAAAABAAAApIEAAAAAZXRjZC12My42LjE2LWRhcndpbi1hcm02NC9ldGNkVVQFAAMBBg1rdXgLAAEEAAAAAAQAAAAAUEsBAh4DCgAAAAAAsyl+XciKsnIEAAAABAAAACEAGAAAAAAAAAAAAKSBdQAAAGV0Y2QtdjMuNi4xNi1kYXJ3aW4tYXJtNjQvZXRjZGN0bFVUBQADAQYNa3V4CwABBAAAAAAEAAAAAFBLBQYAAAAAAgACAMsAAADUAAAADABldGNkIHJlbGVhc2U=";

describe("readTarGzMember", () => {
  const linux = "etcd-v3.6.16-linux-amd64";
  const longName = `${linux}/Documentation/${"a".repeat(120)}.md`;

  it.each([
    ["GNU", GNU_TAR_GZ],
    ["pax", PAX_TAR_GZ],
  ])("reads members of a %s archive, after an entry with a long name", (_format, archive) => {
    const bytes = Buffer.from(archive, "base64");
    expect(readTarGzMember(bytes, `${linux}/etcd`).toString()).toBe("etcd binary\n");
    expect(readTarGzMember(bytes, `${linux}/etcdctl`).toString()).toBe("etcdctl binary\n");
    expect(readTarGzMember(bytes, longName).toString()).toBe("long\n");
  });

  it("refuses a member that is not there, or is a directory", () => {
    const bytes = Buffer.from(GNU_TAR_GZ, "base64");
    expect(() => readTarGzMember(bytes, `${linux}/etcdutl`)).toThrow(`no file ${linux}/etcdutl`);
    expect(() => readTarGzMember(bytes, `${linux}/Documentation/`)).toThrow("no file");
    expect(() => readTarGzMember(bytes, "etcd")).toThrow("no file etcd");
  });

  it("refuses what is not a gzip stream", () => {
    expect(() => readTarGzMember(Buffer.from(ZIP, "base64"), `${linux}/etcd`)).toThrow();
  });
});

describe("readZipMember", () => {
  const darwin = "etcd-v3.6.16-darwin-arm64";

  it("reads a deflated and a stored member of an archive with a comment", () => {
    const bytes = Buffer.from(ZIP, "base64");
    expect(readZipMember(bytes, `${darwin}/etcd`).toString()).toBe(`${"etcd darwin binary ".repeat(40)}\n`);
    expect(readZipMember(bytes, `${darwin}/etcdctl`).toString()).toBe("ctl\n");
  });

  it("refuses a member that is not there", () => {
    expect(() => readZipMember(Buffer.from(ZIP, "base64"), `${darwin}/etcdutl`)).toThrow(
      `no file ${darwin}/etcdutl`,
    );
  });

  it("refuses a damaged member (CRC-32)", () => {
    const bytes = Buffer.from(ZIP, "base64");
    // The stored "ctl\n" sits right before the central directory; change one of its bytes.
    const stored = bytes.indexOf("ctl\nPK\x01\x02", 0, "latin1");
    expect(stored).toBeGreaterThan(0);
    bytes[stored] = "x".charCodeAt(0);
    expect(() => readZipMember(bytes, `${darwin}/etcdctl`)).toThrow("damaged");
  });

  it("refuses what is not a zip archive", () => {
    expect(() => readZipMember(Buffer.from(GNU_TAR_GZ, "base64"), `${darwin}/etcd`)).toThrow(
      "not a zip archive",
    );
    expect(() => readZipMember(Buffer.alloc(4), `${darwin}/etcd`)).toThrow("not a zip archive");
  });
});
