// tsc kept running for worker/compilers/persistent.py: TypeScript's own command line (its lib/tsc.js, loaded as a
// module rather than run) compiles program after program in one Node process. What it keeps between them is
// the parsed standard library (lib.*.d.ts: a SourceFile is never changed once parsed, and TypeScript's
// language service shares them between programs too), taken again only where the file's text is the same;
// a compile spends its time type-checking, not starting Node and parsing the library again.
//
// Its argument: the tsc command's path (its lib/tsc.js is found from there). On stdin, each request: a
// big-endian int, the number of words, then each word as an int (its length in bytes) and its UTF-8 bytes:
// the program's directory, where it compiles as a tsc command started there does, then tsc's arguments.
// On stdout, first one byte (1: tsc is loaded), then each answer: an int, tsc's exit status (99: tsc threw),
// and an int and that many bytes, all tsc wrote (its diagnostics). Nothing else may reach stdout.
"use strict";
const fs = require("fs");
const Module = require("module");
const path = require("path");

const tscPath = path.join(path.dirname(fs.realpathSync(process.argv[2])), "..", "lib", "tsc.js");
const last = "ts.executeCommandLine(ts.sys, ts.noop, ts.sys.args);";
const text = fs.readFileSync(tscPath, "utf8");
if (text.lastIndexOf(last) < 0) {
  process.stderr.write(`${tscPath} does not end as tsc's command line does\n`);
  process.exit(1);
}
const loaded = new Module(tscPath);
loaded.filename = tscPath;
loaded.paths = Module._nodeModulePaths(path.dirname(tscPath));
loaded._compile(text.slice(0, text.lastIndexOf(last)) + "module.exports = ts;\n", tscPath);
const ts = loaded.exports;

const library = path.dirname(tscPath) + path.sep;
const parse = ts.createSourceFile;
const parsed = new Map();
ts.createSourceFile = function (fileName, source, version, parents, kind) {
  if (!fileName.startsWith(library)) return parse.apply(this, arguments);
  const key = `${fileName}\0${JSON.stringify(version)}\0${parents}\0${kind}`;
  const had = parsed.get(key);
  if (had !== undefined && had.text === source) return had;
  const made = parse.apply(this, arguments);
  parsed.set(key, made);
  return made;
};

const write = (bytes) => {
  for (let at = 0; at < bytes.length; ) at += fs.writeSync(1, bytes, at);
};
process.stdout.write = process.stderr.write.bind(process.stderr);

class Exit {
  constructor(status) {
    this.status = status;
  }
}

function compile(words) {
  const said = [];
  const system = Object.assign(Object.create(ts.sys), {
    write: (line) => said.push(line),
    exit: (status) => {
      throw new Exit(status === undefined ? 0 : status);
    },
  });
  let status = 99;
  const home = process.cwd();
  try {
    process.chdir(words[0]);
    ts.executeCommandLine(system, ts.noop, words.slice(1));
  } catch (end) {
    if (end instanceof Exit) status = end.status;
    else said.push(String(end && end.stack));
  } finally {
    process.chdir(home);
  }
  const out = Buffer.from(said.join(""), "utf8");
  const head = Buffer.alloc(8);
  head.writeInt32BE(status, 0);
  head.writeInt32BE(out.length, 4);
  write(Buffer.concat([head, out]));
}

let pending = Buffer.alloc(0);
function take() {
  for (;;) {
    if (pending.length < 4) return;
    const count = pending.readInt32BE(0);
    const words = [];
    let at = 4;
    for (let i = 0; i < count; i++) {
      if (pending.length < at + 4) return;
      const length = pending.readInt32BE(at);
      if (pending.length < at + 4 + length) return;
      words.push(pending.toString("utf8", at + 4, at + 4 + length));
      at += 4 + length;
    }
    pending = pending.subarray(at);
    compile(words);
  }
}
process.stdin.on("data", (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  take();
});
process.stdin.on("end", () => process.exit(0));
write(Buffer.from([1]));
