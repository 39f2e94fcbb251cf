//! Objects only where objects are meant.
//!
//! serde's derived `Deserialize` for a struct also accepts a JSON array, its
//! fields taken by position: `["payments"]` would create queue `payments`,
//! and `"rate_limits": [1, 2, 3]` set all three limits. No request body of
//! the API means that, so every body is read through [`Objects`], a
//! deserializer that passes everything through to the one it wraps except
//! a sequence offered to a struct, which it refuses. It wraps the
//! streaming `serde_json` deserializer rather than a parsed `Value`, so a
//! raw JSON body keeps the spelling of its numbers, and it nests: every
//! struct inside a body, at any depth, is held to the same rule.
//!
//! It also reads an integral float (`870.0`, `1e3`) where an integer is
//! expected: JSON Schema counts it as an integer, so generated clients and
//! languages whose numbers are all floats send it. Only where the type asks
//! for an integer: a raw JSON body still keeps the number as it was spelt,
//! and a fractional value or one out of the type's range is still refused.

use serde::de::{self, DeserializeSeed, Deserializer, Visitor};
use std::fmt;

/// A deserializer that refuses arrays for structs, at every depth.
pub struct Objects<D>(pub D);

/// Wraps the deserializers handed to nested values.
struct Seed<S>(S);

/// Wraps a visitor; `is_struct` when it expects a struct's fields,
/// `integer` when it expects an integer.
struct Guard<V> {
    visitor: V,
    is_struct: bool,
    integer: bool,
}

impl<V> Guard<V> {
    fn any(visitor: V) -> Self {
        Guard {
            visitor,
            is_struct: false,
            integer: false,
        }
    }

    fn integer(visitor: V) -> Self {
        Guard {
            visitor,
            is_struct: false,
            integer: true,
        }
    }
}

/// The integer an integral float names, when one of the widest types holds
/// it exactly; the visitor then checks its own type's range.
enum Integral {
    Unsigned(u64),
    Signed(i64),
}

fn integral(v: f64) -> Option<Integral> {
    // 2^64 and -2^63 are exact as f64; the bounds exclude the first value
    // outside each type.
    if !v.is_finite() || v.fract() != 0.0 {
        None
    } else if (0.0..18_446_744_073_709_551_616.0).contains(&v) {
        Some(Integral::Unsigned(v as u64))
    } else if (-9_223_372_036_854_775_808.0..0.0).contains(&v) {
        Some(Integral::Signed(v as i64))
    } else {
        None
    }
}

macro_rules! forward {
    ($($method:ident),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
                self.0.$method(Guard::any(visitor))
            }
        )*
    };
}

macro_rules! forward_integer {
    ($($method:ident),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
                self.0.$method(Guard::integer(visitor))
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Objects<D> {
    type Error = D::Error;

    forward!(
        deserialize_any,
        deserialize_bool,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_option,
        deserialize_unit,
        deserialize_seq,
        deserialize_map,
        deserialize_identifier,
        deserialize_ignored_any,
    );

    forward_integer!(
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
    );

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_unit_struct(name, Guard::any(visitor))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_newtype_struct(name, Guard::any(visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, Guard::any(visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0
            .deserialize_tuple_struct(name, len, Guard::any(visitor))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(
            name,
            fields,
            Guard {
                visitor,
                is_struct: true,
                integer: false,
            },
        )
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, Guard::any(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Objects(deserializer))
    }
}

macro_rules! pass {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(
            fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
                self.visitor.$method(v)
            }
        )*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Guard<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    pass!(
        visit_bool: bool,
        visit_i8: i8,
        visit_i16: i16,
        visit_i32: i32,
        visit_i64: i64,
        visit_i128: i128,
        visit_u8: u8,
        visit_u16: u16,
        visit_u32: u32,
        visit_u64: u64,
        visit_u128: u128,
        visit_char: char,
        visit_str: &str,
        visit_borrowed_str: &'de str,
        visit_string: String,
        visit_bytes: &[u8],
        visit_borrowed_bytes: &'de [u8],
        visit_byte_buf: Vec<u8>,
    );

    fn visit_f32<E: de::Error>(self, v: f32) -> Result<V::Value, E> {
        self.visit_f64(f64::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<V::Value, E> {
        match integral(v).filter(|_| self.integer) {
            Some(Integral::Unsigned(n)) => self.visitor.visit_u64(n),
            Some(Integral::Signed(n)) => self.visitor.visit_i64(n),
            None => self.visitor.visit_f64(v),
        }
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_some(Objects(d))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_newtype_struct(Objects(d))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        if self.is_struct {
            return Err(de::Error::invalid_type(de::Unexpected::Seq, &"an object"));
        }
        self.visitor.visit_seq(SeqAccess(seq))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(MapAccess(map))
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_enum(EnumAccess(data))
    }
}

struct SeqAccess<A>(A);

impl<'de, A: de::SeqAccess<'de>> de::SeqAccess<'de> for SeqAccess<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

struct MapAccess<A>(A);

impl<'de, A: de::MapAccess<'de>> de::MapAccess<'de> for MapAccess<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(seed)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(Seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

struct EnumAccess<A>(A);

impl<'de, A: de::EnumAccess<'de>> de::EnumAccess<'de> for EnumAccess<A> {
    type Error = A::Error;
    type Variant = VariantAccess<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), A::Error> {
        let (value, variant) = self.0.variant_seed(seed)?;
        Ok((value, VariantAccess(variant)))
    }
}

struct VariantAccess<A>(A);

impl<'de, A: de::VariantAccess<'de>> de::VariantAccess<'de> for VariantAccess<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(Seed(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Guard::any(visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.struct_variant(
            fields,
            Guard {
                visitor,
                is_struct: true,
                integer: false,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::collections::BTreeMap;

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        name: String,
        #[serde(default)]
        inner: Option<Inner>,
        #[serde(default)]
        list: Vec<Inner>,
        #[serde(default)]
        map: BTreeMap<String, Inner>,
        #[serde(default)]
        raw: Option<Box<serde_json::value::RawValue>>,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        n: f64,
    }

    fn read(json: &str) -> Result<Outer, String> {
        let de = &mut serde_json::Deserializer::from_str(json);
        serde_path_to_error::deserialize(Objects(de))
            .map_err(|e| format!("{}: {}", e.path(), e.inner()))
    }

    #[test]
    fn arrays_are_refused_for_structs_at_every_depth() {
        for (json, at) in [
            (r#"["q"]"#, "."),
            (r#"{"name":"q","inner":[1]}"#, "inner"),
            (r#"{"name":"q","list":[{"n":1},[2]]}"#, "list[1]"),
            (r#"{"name":"q","map":{"a":[3]}}"#, "map.a"),
        ] {
            let e = read(json).unwrap_err();
            assert!(
                e.starts_with(&format!("{at}: invalid type: sequence")),
                "{json}: {e}"
            );
        }
    }

    #[test]
    fn objects_raw_values_and_lists_still_read() {
        let outer = read(
            r#"{"name":"q","inner":{"n":1},"list":[{"n":2}],"map":{"a":{"n":3}},"raw":[1.0,{"b":1e0}]}"#,
        )
        .unwrap();
        assert_eq!(outer.inner, Some(Inner { n: 1.0 }));
        assert_eq!(outer.list, [Inner { n: 2.0 }]);
        assert_eq!(outer.raw.unwrap().get(), r#"[1.0,{"b":1e0}]"#);
    }

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    struct Integers {
        small: u8,
        signed: i64,
        #[serde(default)]
        optional: Option<u32>,
        #[serde(default)]
        list: Vec<u16>,
        #[serde(default)]
        float: Option<f64>,
        #[serde(default)]
        raw: Option<Box<serde_json::value::RawValue>>,
    }

    fn integers(json: &str) -> Result<Integers, String> {
        let de = &mut serde_json::Deserializer::from_str(json);
        serde_path_to_error::deserialize(Objects(de))
            .map_err(|e| format!("{}: {}", e.path(), e.inner()))
    }

    #[test]
    fn integral_floats_are_integers_where_integers_are_expected() {
        let read = integers(
            r#"{"small":255.0,"signed":-9.0,"optional":4.0e2,"list":[1.0,2],"float":3.0,"raw":{"n":870.0}}"#,
        )
        .unwrap();
        assert_eq!(
            (read.small, read.signed, read.optional, read.list),
            (255, -9, Some(400), vec![1, 2])
        );
        assert_eq!(read.float, Some(3.0));
        assert_eq!(
            read.raw.unwrap().get(),
            r#"{"n":870.0}"#,
            "raw JSON keeps its spelling"
        );
    }

    #[test]
    fn fractional_or_out_of_range_floats_are_still_refused() {
        for (json, at, says) in [
            (
                r#"{"small":1.5,"signed":0}"#,
                "small",
                "floating point `1.5`",
            ),
            (r#"{"small":256.0,"signed":0}"#, "small", "integer `256`"),
            (r#"{"small":-1.0,"signed":0}"#, "small", "integer `-1`"),
            (
                r#"{"small":0,"signed":1e19}"#,
                "signed",
                "integer `10000000000000000000`",
            ),
            (r#"{"small":0,"signed":1e300}"#, "signed", "floating point"),
            (
                r#"{"small":0,"signed":0,"list":[0.5]}"#,
                "list[0]",
                "floating point `0.5`",
            ),
        ] {
            let e = integers(json).unwrap_err();
            assert!(e.starts_with(at) && e.contains(says), "{json}: {e}");
        }
    }
}
