//! A connection on its own thread, so a statement that blocks (a row lock, `WAIT`) can be
//! seen blocking while the other worker's connection goes on.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a statement the model answers at once may take on the real server.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(10);
/// How long a statement the model leaves waiting must stay unanswered on the real server to
/// count as blocked.
pub const BLOCKED_FOR: Duration = Duration::from_millis(300);

pub struct Connection<Req, Resp> {
    requests: Option<Sender<Req>>,
    replies: Receiver<Resp>,
    thread: Option<JoinHandle<()>>,
}

impl<Req: Send + 'static, Resp: Send + 'static> Connection<Req, Resp> {
    /// Runs `serve` on a thread of its own; it answers every request, in order.
    pub fn spawn(mut serve: impl FnMut(Req) -> Resp + Send + 'static) -> Self {
        let (requests, inbox) = channel::<Req>();
        let (outbox, replies) = channel::<Resp>();
        let thread = std::thread::spawn(move || {
            for request in inbox {
                if outbox.send(serve(request)).is_err() {
                    return;
                }
            }
        });
        Connection {
            requests: Some(requests),
            replies,
            thread: Some(thread),
        }
    }

    pub fn send(&self, request: Req) {
        if let Some(requests) = &self.requests {
            // A closed thread shows up as a missing reply.
            let _ = requests.send(request);
        }
    }

    /// The next reply, if it comes within `within`.
    pub fn reply(&self, within: Duration) -> Option<Resp> {
        // A timeout and a closed thread both mean: no answer.
        self.replies.recv_timeout(within).ok()
    }
}

impl<Req, Resp> Drop for Connection<Req, Resp> {
    fn drop(&mut self) {
        // Closing the channel ends the thread once its current request returns; a thread
        // still blocked on a server is left to end with the process.
        self.requests = None;
        if let Some(t) = self.thread.take() {
            if t.is_finished() {
                let _ = t.join();
            }
        }
    }
}
