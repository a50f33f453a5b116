#!/usr/bin/env bash
# The admission webhook's certificate on a cluster without cert-manager (docs/operations.md,
# "Autoscaled clusters"): makes a CA and a serving certificate for gpusched.gpusched.svc with
# openssl, stores them in the Secret gpusched-webhook-tls, and writes the CA into the
# MutatingWebhookConfiguration gpusched as its caBundle. Run it after
# `kubectl apply -k manifests/autoscaling`, and again before the certificate expires (DAYS, 825 by
# default); gpusched re-reads the files when the Secret changes.
#
#   bash scripts/webhook-cert.sh [--namespace gpusched] [--days 825] [--dir DIR]
#
# The CA key stays in DIR (a new temporary folder by default, deleted at the end): keep it only if
# you want to sign the next certificate with the same CA. Needs kubectl and openssl.
set -euo pipefail

namespace=gpusched
days=825
dir=
while (($#)); do
  case $1 in
    --namespace) namespace=$2; shift 2 ;;
    --days) days=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "webhook-cert.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for tool in kubectl openssl; do
  command -v "$tool" > /dev/null || { echo "webhook-cert.sh: $tool is needed" >&2; exit 2; }
done
if [[ -z $dir ]]; then
  dir=$(mktemp -d)
  trap 'rm -rf -- "$dir"' EXIT
fi
service=gpusched.$namespace.svc

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days "$days" \
  -keyout "$dir/ca.key" -out "$dir/ca.crt" -subj "/CN=gpusched-webhook-ca" 2> /dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -keyout "$dir/tls.key" -out "$dir/tls.csr" -subj "/CN=$service" 2> /dev/null
printf 'subjectAltName=DNS:%s,DNS:%s.cluster.local\nextendedKeyUsage=serverAuth\n' \
  "$service" "$service" > "$dir/ext.cnf"
openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
  -days "$days" -extfile "$dir/ext.cnf" -out "$dir/tls.crt" 2> /dev/null

kubectl -n "$namespace" create secret tls gpusched-webhook-tls --cert="$dir/tls.crt" \
  --key="$dir/tls.key" --dry-run=client -o yaml | kubectl apply -f -
ca_bundle=$(base64 -w0 < "$dir/ca.crt")
kubectl patch mutatingwebhookconfiguration gpusched --type=json \
  -p "[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$ca_bundle\"}]"
echo "webhook-cert.sh: Secret $namespace/gpusched-webhook-tls and the webhook's caBundle written" \
  "(valid $days days, for $service)"
