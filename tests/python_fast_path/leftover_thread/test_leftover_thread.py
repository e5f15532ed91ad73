import threading
import time


def test_leaves_a_chatty_thread():
    def chat():
        while True:
            print("chatter from a thread test_leaves_a_chatty_thread left", flush=True)
            time.sleep(0.02)

    threading.Thread(target=chat, daemon=True).start()


def test_next():
    time.sleep(0.3)
    print("test_next's own line")
