//! What travels on the simulated wire, and what a participant takes off it.
//!
//! The engine is one engine for every scenario, so it carries messages type-erased: a
//! [`Message`] is any `Clone + Label` value. (Not `Debug`: a trait object's vtable keeps every
//! method it lists, and the browser build should not carry debug printing for every message.) Each participant names the type it
//! understands ([`Inbox`]); a participant that speaks two protocols (a lock client talking to
//! a lock service and to a fenced ledger) receives an enum and implements [`Inbox`] by trying
//! each protocol in turn.

use std::any::Any;

/// What a message or timer looks like on screen and in the trace.
pub trait Label {
    /// One short line, e.g. `SELECT balance … FOR UPDATE`.
    fn label(&self) -> String;
}

/// A message of any protocol, as the network carries it.
pub trait Message: Any {
    fn label(&self) -> String;
    /// A second copy, for a link that duplicates.
    fn clone_message(&self) -> Box<dyn Message>;
    fn as_any(&self) -> &dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: Any + Clone + Label> Message for T {
    fn label(&self) -> String {
        Label::label(self)
    }
    fn clone_message(&self) -> Box<dyn Message> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

impl dyn Message {
    /// The message as `T`, if it is one.
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        self.as_any().downcast_ref()
    }

    /// Unwraps the message as `T`, or hands it back unchanged.
    pub fn downcast<T: Any>(self: Box<Self>) -> Result<T, Box<dyn Message>> {
        if self.as_any().is::<T>() {
            Ok(*self.into_any().downcast::<T>().expect("checked by is::<T>"))
        } else {
            Err(self)
        }
    }
}

/// The messages a participant understands.
pub trait Inbox: Sized + 'static {
    /// Takes a message off the wire, or `None` if this participant does not speak its protocol
    /// (it then arrives and is ignored, as a stray packet would be).
    fn accept(msg: Box<dyn Message>) -> Option<Self>;
}

/// Declares message types that participants receive as they are: `inbox!(SqlMsg, LeaseMsg);`.
#[macro_export]
macro_rules! inbox {
    ($($t:ty),+ $(,)?) => {
        $(impl $crate::kernel::message::Inbox for $t {
            fn accept(msg: Box<dyn $crate::kernel::message::Message>) -> Option<Self> {
                msg.downcast::<$t>().ok()
            }
        })+
    };
}

/// A timer of any participant, as the engine keeps it while it is pending.
pub trait TimerKey: Any {
    fn label(&self) -> String;
    /// Whether `other` is the same timer (setting a timer replaces an equal pending one).
    fn same(&self, other: &dyn TimerKey) -> bool;
    fn as_any(&self) -> &dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: Any + PartialEq + Label> TimerKey for T {
    fn label(&self) -> String {
        Label::label(self)
    }
    fn same(&self, other: &dyn TimerKey) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    struct Ping(u32);
    impl Label for Ping {
        fn label(&self) -> String {
            format!("ping {}", self.0)
        }
    }

    #[derive(Clone, Debug, PartialEq)]
    struct Pong;
    impl Label for Pong {
        fn label(&self) -> String {
            "pong".into()
        }
    }

    inbox!(Ping);

    #[test]
    fn a_participant_accepts_only_its_own_protocol() {
        let ping: Box<dyn Message> = Box::new(Ping(3));
        assert_eq!(ping.label(), "ping 3");
        assert_eq!(ping.clone_message().downcast_ref::<Ping>(), Some(&Ping(3)));
        assert_eq!(Ping::accept(ping), Some(Ping(3)));
        assert_eq!(Ping::accept(Box::new(Pong)), None);
    }

    #[test]
    fn timers_are_the_same_only_when_type_and_value_match() {
        let a: Box<dyn TimerKey> = Box::new(Ping(1));
        assert!(a.same(&Ping(1)));
        assert!(!a.same(&Ping(2)));
        assert!(!a.same(&Pong));
    }
}
