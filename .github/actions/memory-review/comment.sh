#!/usr/bin/env bash
# Keep one pull-request comment with the report: update the one this workflow wrote before (found by
# the marker the report starts with), else add one, unless the change leaves the memory alone and
# flags nothing (a code change that makes a lesson stale is flagged: that is worth a comment).
# Needs the GitHub CLI (on GitHub's runners) and GH_TOKEN with `pull-requests: write`.
#
#   REPORT  the Markdown report (review.sh's output `report`)
#   PR      the pull request's number; GITHUB_REPOSITORY is set by GitHub Actions
set -euo pipefail

marker='<!-- sentinel-memory review -->'
author='github-actions[bot]'
repo="${GITHUB_REPOSITORY:?}"
existing=$(gh api --paginate "repos/$repo/issues/$PR/comments" \
    --jq ".[] | select(.user.login == \"$author\" and (.body | startswith(\"$marker\"))) | .id" | head -n 1)
if [ -n "$existing" ]; then
    gh api --method PATCH "repos/$repo/issues/comments/$existing" -F "body=@$REPORT" >/dev/null
    echo "updated comment $existing"
elif grep -q '^### Memory review: no change to the memory, no flags$' "$REPORT"; then
    echo "no memory change: no comment"
else
    gh api --method POST "repos/$repo/issues/$PR/comments" -F "body=@$REPORT" >/dev/null
    echo "added a comment"
fi
