# Schemathesis hooks of the run (scripts/schemathesis.ts loads this file).
import uuid

import schemathesis


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    # Each new request gets a new Idempotency-Key, as an integrator's would. Generated keys repeat
    # ("0", "00"), and a repeated key rightly replays the first answer for 24 hours, which may name
    # an agent or endpoint deleted since; replays are tested in test/api-idempotency.test.ts.
    # Only in the stateful phase, where a replayed answer is followed by its links; the other
    # phases probe missing and malformed headers, which an edit here would disturb. A key the
    # document calls invalid (empty, over 255 characters) is left as generated.
    if case.meta is None or case.meta.phase.name != "stateful":
        return
    key = (case.headers or {}).get("Idempotency-Key")
    if isinstance(key, str) and 1 <= len(key) <= 255:
        case.headers["Idempotency-Key"] = str(uuid.uuid4())
