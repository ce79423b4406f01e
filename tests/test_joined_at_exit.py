"""Background threads the interpreter's exit waits for (:mod:`spectropaint.transforms.
joined_at_exit`): a daemon thread inside native code as the interpreter exits aborts the process."""

from exit_probe import printed_before_a_clean_exit


def test_the_exit_asks_a_running_thread_to_end_and_waits_for_it():
    """Its loop keeps calling scipy's FFT (which releases the GIL, as the coarse picture's read
    does) until the exit says so: the process then exits cleanly, after the loop's last step."""
    script = """
        import threading, time
        import numpy as np, scipy.fft
        from spectropaint.transforms import joined_at_exit
        inside = threading.Event()

        def read():
            frames, end = np.ones((64, 2048)), time.monotonic() + 20.0
            while not joined_at_exit.exiting() and time.monotonic() < end:
                scipy.fft.rfft(frames, axis=1)
                inside.set()
            print("ended at exit" if joined_at_exit.exiting() else "ran out", flush=True)

        joined_at_exit.start(read, name="coarse picture")
        inside.wait()
        print("main thread ends", flush=True)
        """
    assert printed_before_a_clean_exit(script) == ["main thread ends", "ended at exit"]
