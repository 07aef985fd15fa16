"""Threads against evictions: the native paths' thread-safety tests.

    errors_while_evicting(step, repeat, workers=4, evictions=30) -> [exceptions]
        `workers` threads each call step() `repeat` times while another thread clears
        the executable cache `evictions` times (as its LRU bound evicts programs);
        the exceptions the workers raised, one per failed worker.
"""

from __future__ import annotations

import threading

from stablejit import compilation


def errors_while_evicting(step, repeat: int, workers: int = 4, evictions: int = 30) -> list:
    errors = []

    def work():
        try:
            for _ in range(repeat):
                step()
        except Exception as e:  # (reported to the caller)
            errors.append(e)

    def clear():
        for _ in range(evictions):
            compilation._EXECUTABLES.clear()
    threads = [threading.Thread(target=work) for _ in range(workers)]
    threads.append(threading.Thread(target=clear))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors
