//! Syntax of the names users choose: queues, tasks, organizations, principals.

use crate::field::FieldError;

/// Checks `value` is 1..=max characters of `[A-Za-z0-9_-]`.
pub fn check_identifier(field: &str, value: &str, max: usize) -> Result<(), FieldError> {
    if value.is_empty() || value.len() > max {
        return Err(FieldError::new(
            field,
            format!(
                "must be 1 to {max} characters long, got {}",
                value.chars().count()
            ),
        ));
    }
    if let Some(bad) = value
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(FieldError::new(
            field,
            format!("may contain only letters, digits, '_' and '-', found {bad:?}"),
        ));
    }
    Ok(())
}

pub const QUEUE_NAME_MAX: usize = 100;
pub const TASK_ID_MAX: usize = 500;
pub const ORGANIZATION_NAME_MAX: usize = 100;
pub const PRINCIPAL_NAME_MAX: usize = 100;
pub const JOB_NAME_MAX: usize = 100;

pub fn check_queue_name(field: &str, value: &str) -> Result<(), FieldError> {
    check_identifier(field, value, QUEUE_NAME_MAX)
}

pub fn check_job_name(field: &str, value: &str) -> Result<(), FieldError> {
    check_identifier(field, value, JOB_NAME_MAX)
}

pub fn check_task_id(field: &str, value: &str) -> Result<(), FieldError> {
    check_identifier(field, value, TASK_ID_MAX)
}

pub fn check_organization_name(field: &str, value: &str) -> Result<(), FieldError> {
    check_identifier(field, value, ORGANIZATION_NAME_MAX)
}

pub fn check_principal_name(field: &str, value: &str) -> Result<(), FieldError> {
    check_identifier(field, value, PRINCIPAL_NAME_MAX)
}

pub const GROUP_MAX: usize = 200;

/// Checks a task's group: 1..=200 characters of `[A-Za-z0-9_.:@-]`, wider
/// than an identifier because producers stamp groups from their own data
/// (a domain, an account `acct:42`, an address).
pub fn check_group(field: &str, value: &str) -> Result<(), FieldError> {
    if value.is_empty() || value.len() > GROUP_MAX {
        return Err(FieldError::new(
            field,
            format!(
                "must be 1 to {GROUP_MAX} characters long, got {}",
                value.chars().count()
            ),
        ));
    }
    if let Some(bad) = value
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "_-.:@".contains(*c)))
    {
        return Err(FieldError::new(
            field,
            format!("may contain only letters, digits and '_', '-', '.', ':', '@', found {bad:?}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_take_a_wider_alphabet_and_name_the_field() {
        assert!(check_group("group", "acct:42@eu.example-1_x").is_ok());
        assert!(check_group("group", &"g".repeat(GROUP_MAX)).is_ok());
        let e = check_group("tasks[2].group", "").unwrap_err();
        assert_eq!(e.field, "tasks[2].group");
        assert!(check_group("group", &"g".repeat(GROUP_MAX + 1)).is_err());
        assert!(check_group("group", "a b").is_err());
        assert!(check_group("group", "a/b").is_err());
    }

    #[test]
    fn accepts_the_allowed_alphabet_up_to_the_limit() {
        assert!(check_queue_name("name", "payments_EU-1").is_ok());
        assert!(check_queue_name("name", &"a".repeat(100)).is_ok());
        assert!(check_task_id("task_id", &"a".repeat(500)).is_ok());
    }

    #[test]
    fn rejects_empty_long_and_foreign_characters() {
        assert_eq!(check_queue_name("name", "").unwrap_err().field, "name");
        assert!(check_queue_name("name", &"a".repeat(101)).is_err());
        assert!(check_task_id("task_id", &"a".repeat(501)).is_err());
        for bad in ["a b", "a/b", "a.b", "é", "a:b"] {
            assert!(check_queue_name("name", bad).is_err(), "{bad}");
        }
    }
}
