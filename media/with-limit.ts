/** Waits for `work`, at most `limitMs`; never throws (a stage that ends the call waits, but not forever). */
export async function withLimit(work: Promise<unknown>, limitMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    work.catch(() => undefined),
    new Promise((resolve) => (timer = setTimeout(resolve, limitMs))),
  ]).finally(() => clearTimeout(timer));
}
