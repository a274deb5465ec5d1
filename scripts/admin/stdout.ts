/**
 * Sends everything written to stdout through the returned function only; anything else that
 * writes there (a library's console.log, a migration notice) goes to stderr instead, so that
 * `--json` output is exactly one JSON object.
 */
export function claimStdout(): (text: string) => void {
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  return (text) => {
    write(text);
  };
}
