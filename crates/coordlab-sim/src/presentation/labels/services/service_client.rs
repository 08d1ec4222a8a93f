//! How [`Renew`] reads on the picture's arrows and in the event log.

use crate::kernel::participant::Label;
use crate::protocols::services::service_client::Renew;

impl Label for Renew {
    fn label(&self) -> String {
        "keep-alive".into()
    }
}
