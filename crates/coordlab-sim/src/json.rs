//! `json!` for the simulator: the same notation as `serde_json::json!` for what we write
//! (an object with literal keys, an array, or one value), but infallible. serde_json's macro
//! unwraps `to_value` at every value, and that one `unwrap` keeps serde_json's error
//! formatting (its `Debug`, its parse messages, std's I/O error texts) in every browser
//! bundle: about 4 KiB of code and text that no run can reach, since every value we convert
//! is plain data. A value that cannot be a JSON value (a map with non-string keys) becomes
//! `null` instead of a panic.

use serde::Serialize;
use serde_json::Value;

/// `value` as a JSON value; `null` for the rare value JSON cannot hold.
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// Builds a [`serde_json::Value`]: `json!({"key": expr, ...})`, `json!([expr, ...])`,
/// `json!(null)` or `json!(expr)`. Values nest as expressions (`json!({"a": [1, 2]})`), and an
/// inner object is written `json!({...})`.
#[macro_export]
macro_rules! json {
    (null) => {
        ::serde_json::Value::Null
    };
    ({ $($key:literal : $value:expr),* $(,)? }) => {{
        #[allow(unused_mut)]
        let mut map = ::serde_json::Map::new();
        $( map.insert(::std::string::String::from($key), $crate::json::to_json(&$value)); )*
        ::serde_json::Value::Object(map)
    }};
    ([ $($element:expr),* $(,)? ]) => {
        ::serde_json::Value::Array(::std::vec![$($crate::json::to_json(&$element)),*])
    };
    ($other:expr) => {
        $crate::json::to_json(&$other)
    };
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    #[test]
    fn builds_the_same_values_as_serde_json() {
        let name = "worker-a";
        let steps = vec![1, 2];
        assert_eq!(
            json!({"worker": name, "steps": steps, "done": true, "inner": json!({"n": 3})}),
            serde_json::json!({"worker": "worker-a", "steps": [1, 2], "done": true, "inner": {"n": 3}})
        );
        assert_eq!(json!([name, 7]), serde_json::json!(["worker-a", 7]));
        assert_eq!(json!(null), Value::Null);
        assert_eq!(json!(5u32), serde_json::json!(5));
        assert_eq!(json!({}), serde_json::json!({}));
    }

    #[test]
    fn a_value_json_cannot_hold_is_null_not_a_panic() {
        let by_pair: std::collections::BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into_iter().collect();
        assert_eq!(json!(by_pair), Value::Null);
    }
}
