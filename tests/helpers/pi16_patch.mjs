// pi 1.6's unified patch (jsdiff's createTwoFilesPatch, as its edit tool makes the `patch` detail)
// for each [old, new] pair read as JSON on stdin.
const [diffLib, cases] = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.on("data", (chunk) => (text += chunk));
  process.stdin.on("end", () => resolve(text));
}));
const Diff = await import(diffLib);
const patches = cases.map(([path, oldText, newText]) =>
  Diff.createTwoFilesPatch(path, path, oldText, newText, undefined, undefined, {
    context: 4,
    headerOptions: Diff.FILE_HEADERS_ONLY,
  }),
);
process.stdout.write(JSON.stringify(patches));
