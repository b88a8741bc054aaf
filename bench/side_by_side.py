"""What the summaries of the side-by-side scripts (grpc_vs_ws.sh,
replicas.sh) read from their JSON lines; sh_helpers.sh's summarize_results
makes it importable for them."""
import json


def lines_by_system_round(path):
    """{system: {round: line}} of the load generators' JSON lines in `path`
    (one line per system and round; anything not a JSON object is skipped)."""
    by = {}
    with open(path) as f:
        for text in f:
            if text.strip().startswith('{'):
                r = json.loads(text)
                by.setdefault(r['system'], {}).setdefault(r['round'], r)
    return by


def manager_cpu(r):
    """The manager's (the system under test's) CPU time per op, in us."""
    return r['procs']['sut']['cpu_us_per_op']
