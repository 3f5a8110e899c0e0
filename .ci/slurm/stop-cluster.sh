#!/usr/bin/env bash
# Stop the daemons that .ci/slurm/start-cluster.sh STATE_DIR started, by the PIDs it recorded
# (never by name), newest first; then remove the slurm.conf / gres.conf it wrote.
#   .ci/slurm/stop-cluster.sh STATE_DIR
set -uo pipefail

state="${1:?usage: stop-cluster.sh STATE_DIR}"
pids="$state/pids"
marker="# written by jspgfn .ci/slurm/start-cluster.sh"

if [[ -f $pids ]]; then
    # jobs first (this cluster only runs our jobs), so that no slurmstepd outlives slurmd
    if grep -q '^slurmctld ' "$pids" && kill -0 "$(awk '$1 == "slurmctld" {print $2}' "$pids" | tail -n 1)" 2>/dev/null; then
        jobs=$(squeue -h -o %i 2>/dev/null | tr '\n' ' ')
        if [[ -n ${jobs// } ]]; then
            # shellcheck disable=SC2086
            scancel $jobs 2>/dev/null && echo "slurm-teardown: cancelled jobs $jobs"
            for _ in $(seq 25); do [[ -z $(squeue -h -t R,CG -o %i 2>/dev/null) ]] && break; sleep 0.2; done
        fi
    fi
    # newest first: slurmd, slurmctld, munged
    tac "$pids" | while read -r name pid; do
        [[ -n ${pid:-} ]] || continue
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
            if kill -0 "$pid" 2>/dev/null; then
                kill -KILL "$pid" 2>/dev/null
                echo "slurm-teardown: $name (pid $pid) killed"
            else
                echo "slurm-teardown: $name (pid $pid) stopped"
            fi
        fi
    done
    : >"$pids"
fi
for f in /etc/slurm/slurm.conf /etc/slurm/gres.conf; do
    if [[ -f $f ]] && grep -qF "$marker" "$f"; then rm -f "$f"; fi
done
exit 0
