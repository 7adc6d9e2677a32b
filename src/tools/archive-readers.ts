/*
 * Readers of the one file a release archive is fetched for: etcd's
 * .tar.gz (Linux) and .zip (darwin). Pure, over the bytes in memory.
 */
import { crc32, gunzipSync, inflateRawSync } from "node:zlib";

/**
 * One regular file out of a .tar.gz, by its path in the archive. etcd's
 * archives are GNU tar; a reader of a few lines beats depending on which
 * `tar` the machine has. Understands ustar prefixes, GNU long names and
 * pax `path` records.
 */
export function readTarGzMember(archive: Uint8Array, member: string): Buffer {
  const tar = gunzipSync(archive);
  let offset = 0;
  let longName: string | undefined;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const size = tarNumber(header.subarray(124, 136));
    const type = String.fromCharCode(header[156] ?? 0);
    const dataStart = offset + 512;
    if (dataStart + size > tar.length)
      throw new Error(`the tar archive is truncated (entry at byte ${offset})`);
    const data = tar.subarray(dataStart, dataStart + size);
    offset = dataStart + Math.ceil(size / 512) * 512;
    if (type === "L") {
      longName = cString(data);
      continue;
    }
    if (type === "x") {
      longName = paxPath(data) ?? longName;
      continue;
    }
    if (type === "g") continue;
    const name = (longName ?? ustarName(header)).replace(/^\.\//, "");
    longName = undefined;
    if ((type === "0" || type === "\0") && name === member) return Buffer.from(data);
  }
  throw new Error(`the archive has no file ${member}`);
}

function cString(bytes: Uint8Array): string {
  const end = bytes.indexOf(0);
  return Buffer.from(end === -1 ? bytes : bytes.subarray(0, end)).toString("utf8");
}

function ustarName(header: Uint8Array): string {
  const name = cString(header.subarray(0, 100));
  const isUstar = cString(header.subarray(257, 262)) === "ustar";
  const prefix = isUstar ? cString(header.subarray(345, 500)) : "";
  return prefix ? `${prefix}/${name}` : name;
}

/** A size field: octal text, or big-endian binary when the high bit of the first byte is set (GNU, > 8 GiB). */
function tarNumber(field: Uint8Array): number {
  if ((field[0] ?? 0) & 0x80) {
    let value = (field[0] ?? 0) & 0x7f;
    for (const byte of field.subarray(1)) value = value * 256 + byte;
    return value;
  }
  const text = cString(field).trim();
  return text === "" ? 0 : parseInt(text, 8);
}

/** The `path` of pax extended header records: "<length> path=<value>\n". */
function paxPath(data: Uint8Array): string | undefined {
  const text = Buffer.from(data).toString("utf8");
  return /(?:^|\n)\d+ path=([^\n]*)\n/.exec(text)?.[1];
}

/**
 * One file out of a .zip (etcd's darwin archives, made by `zip -qr`), by
 * its path in the archive; its CRC-32 is checked. Stored and deflated
 * entries; no zip64, which etcd's archives, far below 4 GiB, do not use.
 */
export function readZipMember(archive: Uint8Array, member: string): Buffer {
  const zip = Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength);
  const end = endOfCentralDirectory(zip);
  const entries = zip.readUInt16LE(end + 10);
  let entry = zip.readUInt32LE(end + 16);
  for (let index = 0; index < entries; index++) {
    if (entry + 46 > zip.length || zip.readUInt32LE(entry) !== 0x02014b50) {
      throw new Error("the zip archive's central directory is damaged");
    }
    const method = zip.readUInt16LE(entry + 10);
    const crc = zip.readUInt32LE(entry + 16);
    const compressedSize = zip.readUInt32LE(entry + 20);
    const size = zip.readUInt32LE(entry + 24);
    const nameLength = zip.readUInt16LE(entry + 28);
    const extraLength = zip.readUInt16LE(entry + 30);
    const commentLength = zip.readUInt16LE(entry + 32);
    const localHeader = zip.readUInt32LE(entry + 42);
    const name = zip.toString("utf8", entry + 46, entry + 46 + nameLength);
    entry += 46 + nameLength + extraLength + commentLength;
    if (name !== member) continue;
    if ([compressedSize, size, localHeader].includes(0xffffffff))
      throw new Error(`${member} is a zip64 entry`);
    if (localHeader + 30 > zip.length || zip.readUInt32LE(localHeader) !== 0x04034b50) {
      throw new Error(`the local header of ${member} is damaged`);
    }
    const dataStart =
      localHeader + 30 + zip.readUInt16LE(localHeader + 26) + zip.readUInt16LE(localHeader + 28);
    const data = zip.subarray(dataStart, dataStart + compressedSize);
    let content: Buffer;
    if (method === 0) content = Buffer.from(data);
    else if (method === 8) content = inflateRawSync(data);
    else throw new Error(`${member} uses compression method ${method}; only stored and deflated are read`);
    if (content.length !== size || crc32(content) !== crc)
      throw new Error(`${member} is damaged (size or CRC-32)`);
    return content;
  }
  throw new Error(`the archive has no file ${member}`);
}

/** The end-of-central-directory record: the last 22 bytes, or earlier when the archive has a comment. */
function endOfCentralDirectory(zip: Buffer): number {
  if (zip.length < 22) throw new Error("not a zip archive (too short)");
  const earliest = Math.max(0, zip.length - 22 - 0xffff);
  for (let offset = zip.length - 22; offset >= earliest; offset--) {
    if (zip.readUInt32LE(offset) === 0x06054b50) return offset;
  }
  throw new Error("not a zip archive (no end-of-central-directory record)");
}
