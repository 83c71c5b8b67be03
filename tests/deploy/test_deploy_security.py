"""The chart's secure defaults: HTTPS with generated (or existing) certificates, client certificates
for the extender's verbs, a token for /metrics, a NetworkPolicy in extender mode, no binding unless asked."""

from __future__ import annotations

import base64

import pytest
from cryptography import x509
from deploy_testlib import by_kind, container, objects, one, parse_cli, render


def secrets(objs: list[dict]) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in by_kind(objs, "Secret")}


def test_extender_serves_https_with_client_certificates_behind_a_network_policy() -> None:
    objs = objects(render({"mode": "extender"}))
    args = parse_cli(container(objs)["args"])
    assert args.tls_cert_file and args.tls_private_key_file and args.client_ca_file and args.metrics_token_file
    s = secrets(objs)
    assert set(s) == {"kubesched-tls", "kubesched-client", "kubesched-metrics-token"}
    cert = x509.load_pem_x509_certificate(base64.b64decode(s["kubesched-tls"]["data"]["tls.crt"]))
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName)
    assert "kubesched.kubesched.svc" in names  # the urlPrefix host and tlsConfig.serverName in NOTES
    ca = x509.load_pem_x509_certificate(base64.b64decode(s["kubesched-tls"]["data"]["ca.crt"]))
    client = x509.load_pem_x509_certificate(base64.b64decode(s["kubesched-client"]["data"]["tls.crt"]))
    assert client.issuer == ca.subject == cert.issuer
    assert len(base64.b64decode(s["kubesched-metrics-token"]["data"]["token"])) == 48
    pol = one(objs, "NetworkPolicy")
    (rule,) = pol["spec"]["ingress"]
    assert rule["ports"] == [{"port": 8888, "protocol": "TCP"}]
    assert rule["from"][0]["podSelector"]["matchLabels"] == {"component": "kube-scheduler"}
    # binding is opt-in
    rules = one(objs, "ClusterRole")["rules"]
    assert not any("pods/binding" in r["resources"] for r in rules)


def test_existing_secrets_are_mounted_and_none_generated() -> None:
    values = {"mode": "extender", "tls": {"existingSecret": "my-tls"}, "metricsAuth": {"existingSecret": "my-token"},
              "prometheusTokenSecret": "prom"}
    objs = objects(render(values))
    assert by_kind(objs, "Secret") == []
    vols = {v["name"]: v.get("secret", {}).get("secretName") for v in one(objs, "Deployment")["spec"]["template"]["spec"]["volumes"]}
    assert (vols["tls"], vols["metrics-token"], vols["prometheus-token"]) == ("my-tls", "my-token", "prom")


def test_plain_http_is_possible_but_not_with_a_token() -> None:
    objs = objects(render({"tls": {"enabled": False}, "metricsAuth": {"enabled": False}}))
    args = parse_cli(container(objs)["args"])
    assert args.tls_cert_file is None and args.metrics_token_file is None
    assert container(objs)["livenessProbe"]["httpGet"]["scheme"] == "HTTP"
    with pytest.raises(Exception, match="metricsAuth.enabled needs tls.enabled"):
        render({"tls": {"enabled": False}})


def test_scheduler_mode_has_no_network_policy_and_no_client_secret() -> None:
    objs = objects(render())
    assert by_kind(objs, "NetworkPolicy") == []
    assert set(secrets(objs)) == {"kubesched-tls", "kubesched-metrics-token"}
