"""config.gcpause: the cyclic collector is off inside the block, across threads, and as it was
found once the last block is left."""

import gc
import threading

from config.gcpause import collector_paused


def test_the_collector_is_off_inside_and_back_on_after():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # an inner block leaving does not turn it on under the outer
    assert gc.isenabled()


def test_a_process_that_turned_it_off_keeps_it_off():
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_threads_turn_it_on_only_when_the_last_one_leaves():
    entered, release = threading.Event(), threading.Event()
    seen: list[bool] = []

    def other() -> None:
        with collector_paused():
            entered.set()
            release.wait(5)

    thread = threading.Thread(target=other)
    with collector_paused():
        thread.start()
        assert entered.wait(5)
    seen.append(gc.isenabled())  # the other thread is still inside
    release.set()
    thread.join(5)
    assert seen == [False]
    assert gc.isenabled()


def test_an_error_inside_still_turns_it_back_on():
    try:
        with collector_paused():
            raise ValueError("boom")
    except ValueError:
        pass
    assert gc.isenabled()
