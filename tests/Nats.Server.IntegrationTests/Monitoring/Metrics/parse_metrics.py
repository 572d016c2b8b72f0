"""Parses a /metrics scrape with the Prometheus project's own Python parser (Debian's
python3-prometheus-client) and prints every sample as JSON, so a .NET test can compare numbers.
Usage: parse_metrics.py openmetrics|prometheus < scrape. A parse error exits non-zero."""
import json
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families as parse_prometheus

text = sys.stdin.read()
parse = parse_openmetrics if sys.argv[1] == "openmetrics" else parse_prometheus
samples = []
for family in parse(text):
    for sample in family.samples:
        samples.append({"family": family.name, "type": family.type, "name": sample.name,
                        "labels": sample.labels, "value": sample.value})
json.dump(samples, sys.stdout)
