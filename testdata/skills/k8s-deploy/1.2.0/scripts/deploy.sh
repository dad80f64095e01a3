#!/bin/sh
# Roll a deployment to a new image and wait for it.
set -eu
image=${1:?usage: deploy.sh IMAGE}
kubectl set image deployment/app app="$image"
kubectl rollout status deployment/app --timeout=5m
