# What runs when a run ends, in Snakemake's main process (not for dry runs).
# Its scheduler's rate-limit timers would otherwise hold the process up to the
# profile's timespan after the last job (conflictlab.scheduler_timers).

from conflictlab.scheduler_timers import cancel_pending_timers


onsuccess:
    cancel_pending_timers()


onerror:
    cancel_pending_timers()
