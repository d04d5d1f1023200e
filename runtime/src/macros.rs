//! Small macros for the impl blocks that several primitives repeat alike.

/// `Default` as `new()`, and a `Debug` that shows the named getters' values:
/// `default_and_debug!(Lock { "locked": is_locked })`.
macro_rules! default_and_debug {
    ($t:ident { $($field:literal: $get:ident),* $(,)? }) => {
        impl Default for $t {
            fn default() -> Self {
                $t::new()
            }
        }

        impl core::fmt::Debug for $t {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct(stringify!($t))
                    $(.field($field, &self.$get()))*
                    .finish()
            }
        }
    };
}

/// An error type with one fixed message: `Display` writes it, and it is a
/// `std::error::Error`.
macro_rules! message_error {
    ($t:ident, $message:literal) => {
        impl core::fmt::Display for $t {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str($message)
            }
        }

        impl std::error::Error for $t {}
    };
}

/// A `const fn`, except under loom, whose atomics' constructors are not
/// `const`: one body serves both builds.
macro_rules! const_unless_loom {
    ($(#[$attr:meta])* $vis:vis fn $name:ident() -> $ret:ty $body:block) => {
        #[cfg(not(loom))]
        $(#[$attr])*
        $vis const fn $name() -> $ret $body

        #[cfg(loom)]
        $(#[$attr])*
        $vis fn $name() -> $ret $body
    };
}

/// Applies one `cfg` to each item: a group of items says its condition once.
macro_rules! cfg_items {
    (#[cfg($cond:meta)] $($item:item)*) => {
        $(#[cfg($cond)] $item)*
    };
}

pub(crate) use {cfg_items, const_unless_loom, default_and_debug, message_error};
