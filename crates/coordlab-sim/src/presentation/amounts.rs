//! Amounts of money in the words of cards, labels and narration: the protocols keep them as
//! whole rupees.

/// Formats an amount of rupees for people.
pub fn rupees(amount: i64) -> String {
    format!("₹{amount}")
}
