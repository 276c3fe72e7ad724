//! Field names. YaCy's by default; every one can be renamed, as YaCy installations can.

use super::Dimension;

/// How a core holds what the worker writes after signing (issue 46).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// YaCy's schema: `*_unique_b` booleans, `*_copycount_i` and `near_group_s`, indexed and
    /// stored. Every write makes Solr re-index the whole document.
    #[default]
    Yacy,
    /// Single-valued numeric docValues-only fields (neither indexed nor stored), which Solr updates
    /// in place: `*_unique_i` (1 or 0), `*_copies_i` and `near_group_l` (see [`IN_PLACE_NAMES`]).
    /// A count refresh then touches no other field of the document.
    InPlace,
}

impl Profile {
    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Yacy => "yacy",
            Profile::InPlace => "in-place",
        }
    }
}

/// The fields the in-place profile writes instead of YaCy's, as `(YaCy's name, the profile's)`:
/// every one a single-valued numeric docValues-only field. The flags hold 1 (the representative, or
/// a page without doubles) or 0; the counts the group's size; `near_group_l` the representative
/// id's 64-bit hash (`store::id_hash`), the same for every member of a near cluster.
pub const IN_PLACE_NAMES: [(&str, &str); 11] = [
    ("exact_signature_unique_b", "exact_signature_unique_i"),
    ("fuzzy_signature_unique_b", "fuzzy_signature_unique_i"),
    ("title_unique_b", "title_unique_i"),
    ("description_unique_b", "description_unique_i"),
    ("www_unique_b", "www_unique_i"),
    ("http_unique_b", "http_unique_i"),
    ("near_unique_b", "near_unique_i"),
    ("exact_signature_copycount_i", "exact_signature_copies_i"),
    ("fuzzy_signature_copycount_i", "fuzzy_signature_copies_i"),
    ("near_copycount_i", "near_copies_i"),
    ("near_group_s", "near_group_l"),
];

/// The names of every field the worker reads or writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldNames {
    /// How the fields the worker writes after signing are held: the names below follow it (a
    /// role renamed with `--field` keeps its name).
    pub profile: Profile,
    /// The unique key.
    pub id: String,
    /// The URL.
    pub url: String,
    /// The page text.
    pub text: String,
    /// The title (multi-valued; the first value counts).
    pub title: String,
    /// The description (multi-valued; all values count, in order).
    pub description: String,
    /// Solr's optimistic-concurrency version.
    pub version: String,
    /// `exact_signature_l`.
    pub exact_signature: String,
    /// `fuzzy_signature_l`.
    pub fuzzy_signature: String,
    /// `fuzzy_signature_text_t` (the `yacy` profile with raw and quantised counts).
    pub fuzzy_signature_text: String,
    /// `fuzzy_signature_words_i`: how many words the fuzzy profile has (`--fuzzy-min-words` reads it
    /// on runs that do not read texts).
    pub fuzzy_signature_words: String,
    /// `title_exact_signature_l`.
    pub title_signature: String,
    /// `description_exact_signature_l`.
    pub description_signature: String,
    /// `*_unique_b` per dimension, in [`Dimension::ALL`] order.
    pub unique: [String; Dimension::COUNT],
    /// `exact_signature_copycount_i`.
    pub exact_count: String,
    /// `fuzzy_signature_copycount_i`.
    pub fuzzy_count: String,
    /// `near_trials_ls`: the near-duplicate trial values (multi-valued long).
    pub near_trials: String,
    /// `near_keys_ls`: the near-duplicate combination keys (multi-valued long, with docValues: Solr
    /// finds the documents sharing one).
    pub near_keys: String,
    /// `near_version_s`: the definition, parameters and chrome model the near values come from.
    pub near_version: String,
    /// `near_copycount_i`.
    pub near_count: String,
    /// `near_group_s`: the id of the near cluster's representative (single-valued string with
    /// docValues, for `{!collapse}`).
    pub near_group: String,
}

/// Every field the worker reads or writes, by YaCy's name: the one table behind the defaults,
/// `--field NAME=FIELD` and the command line's help. In the order of `FieldNames::slots_mut`.
pub const YACY_NAMES: [&str; 26] = [
    "id",
    "sku",
    "text_t",
    "title",
    "description_txt",
    "_version_",
    "exact_signature_l",
    "fuzzy_signature_l",
    "fuzzy_signature_text_t",
    "fuzzy_signature_words_i",
    "title_exact_signature_l",
    "description_exact_signature_l",
    "exact_signature_unique_b",
    "fuzzy_signature_unique_b",
    "title_unique_b",
    "description_unique_b",
    "www_unique_b",
    "http_unique_b",
    "near_unique_b",
    "exact_signature_copycount_i",
    "fuzzy_signature_copycount_i",
    "near_trials_ls",
    "near_keys_ls",
    "near_version_s",
    "near_copycount_i",
    "near_group_s",
];

impl Default for FieldNames {
    fn default() -> Self {
        let mut f = FieldNames {
            profile: Profile::Yacy,
            id: String::new(),
            url: String::new(),
            text: String::new(),
            title: String::new(),
            description: String::new(),
            version: String::new(),
            exact_signature: String::new(),
            fuzzy_signature: String::new(),
            fuzzy_signature_text: String::new(),
            fuzzy_signature_words: String::new(),
            title_signature: String::new(),
            description_signature: String::new(),
            unique: Default::default(),
            exact_count: String::new(),
            fuzzy_count: String::new(),
            near_trials: String::new(),
            near_keys: String::new(),
            near_version: String::new(),
            near_count: String::new(),
            near_group: String::new(),
        };
        for (slot, name) in f.slots_mut().into_iter().zip(YACY_NAMES) {
            *slot = name.to_owned();
        }
        f
    }
}

impl FieldNames {
    /// Every name, in [`YACY_NAMES`] order.
    fn slots_mut(&mut self) -> [&mut String; 26] {
        let [u0, u1, u2, u3, u4, u5, u6] = &mut self.unique;
        [
            &mut self.id,
            &mut self.url,
            &mut self.text,
            &mut self.title,
            &mut self.description,
            &mut self.version,
            &mut self.exact_signature,
            &mut self.fuzzy_signature,
            &mut self.fuzzy_signature_text,
            &mut self.fuzzy_signature_words,
            &mut self.title_signature,
            &mut self.description_signature,
            u0,
            u1,
            u2,
            u3,
            u4,
            u5,
            u6,
            &mut self.exact_count,
            &mut self.fuzzy_count,
            &mut self.near_trials,
            &mut self.near_keys,
            &mut self.near_version,
            &mut self.near_count,
            &mut self.near_group,
        ]
    }

    /// Renames the field YaCy calls `yacy_name` (`--field NAME=FIELD`); false when there is no such
    /// field in [`YACY_NAMES`].
    pub fn rename(&mut self, yacy_name: &str, field: &str) -> bool {
        match YACY_NAMES.iter().position(|n| *n == yacy_name) {
            Some(i) => {
                *self.slots_mut()[i] = field.to_owned();
                true
            }
            None => false,
        }
    }

    /// Switches to `profile`: each role the profiles name differently ([`IN_PLACE_NAMES`]) that
    /// still has the other profile's default name takes this profile's; a role renamed with
    /// `--field` keeps its name.
    pub fn set_profile(&mut self, profile: Profile) {
        if self.profile == profile {
            return;
        }
        for (yacy, in_place) in IN_PLACE_NAMES {
            let (from, to) = match profile {
                Profile::InPlace => (yacy, in_place),
                Profile::Yacy => (in_place, yacy),
            };
            if let Some(i) = YACY_NAMES.iter().position(|n| *n == yacy) {
                let slot = &mut self.slots_mut()[i];
                if slot.as_str() == from {
                    **slot = to.to_owned();
                }
            }
        }
        self.profile = profile;
    }

    /// The fields of the roles the profiles name differently ([`IN_PLACE_NAMES`]), as this
    /// configuration names them, with the role's YaCy name.
    pub fn profile_fields(&self) -> Vec<(&'static str, String)> {
        let mut copy = self.clone();
        let slots = copy.slots_mut();
        IN_PLACE_NAMES
            .iter()
            .filter_map(|(yacy, _)| {
                let i = YACY_NAMES.iter().position(|n| n == yacy)?;
                Some((*yacy, slots[i].clone()))
            })
            .collect()
    }

    /// Whether the flags are numbers (1/0) rather than booleans.
    pub fn numeric_flags(&self) -> bool {
        self.profile == Profile::InPlace
    }

    /// A flag's value as a query term: `true`/`false`, or `1`/`0` under the in-place profile.
    pub fn flag_value(&self, unique: bool) -> &'static str {
        match (self.numeric_flags(), unique) {
            (false, true) => "true",
            (false, false) => "false",
            (true, true) => "1",
            (true, false) => "0",
        }
    }

    /// Two roles mapped to one field (by `--field`), as `(role, other role, field)` with the roles
    /// by their YaCy names, in [`YACY_NAMES`] order; `None` when every role has a field of its own.
    /// The worker would read one role's values as the other's and write both into one field.
    pub fn shared(&self) -> Option<(&'static str, &'static str, String)> {
        let mut copy = self.clone();
        let slots = copy.slots_mut();
        for i in 0..slots.len() {
            for j in i + 1..slots.len() {
                if *slots[i] == *slots[j] {
                    return Some((YACY_NAMES[i], YACY_NAMES[j], slots[i].clone()));
                }
            }
        }
        None
    }

    /// The flag field of a dimension.
    pub fn unique(&self, d: Dimension) -> &str {
        &self.unique[d.index()]
    }

    /// The copy-count field of a dimension, for exact, fuzzy and near.
    pub fn count(&self, d: Dimension) -> Option<&str> {
        match d {
            Dimension::Exact => Some(&self.exact_count),
            Dimension::Fuzzy => Some(&self.fuzzy_count),
            Dimension::Near => Some(&self.near_count),
            _ => None,
        }
    }

    /// The stored signature a content dimension groups by.
    pub fn signature(&self, d: Dimension) -> Option<&str> {
        match d {
            Dimension::Exact => Some(&self.exact_signature),
            Dimension::Fuzzy => Some(&self.fuzzy_signature),
            Dimension::Title => Some(&self.title_signature),
            Dimension::Description => Some(&self.description_signature),
            Dimension::Www | Dimension::Http | Dimension::Near => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_yacy_name_is_its_own_default_and_renames_one_field() {
        let defaults = FieldNames::default();
        assert_eq!(defaults.id, "id");
        assert_eq!(defaults.url, "sku");
        assert_eq!(defaults.unique(Dimension::Www), "www_unique_b");
        assert_eq!(
            defaults.count(Dimension::Fuzzy),
            Some("fuzzy_signature_copycount_i")
        );
        for name in YACY_NAMES {
            let mut f = FieldNames::default();
            assert!(f.rename(name, "renamed"));
            assert_ne!(f, defaults, "{name}");
            assert!(
                !format!("{f:?}").contains(&format!("\"{name}\"")),
                "{name} renamed"
            );
        }
        assert!(!FieldNames::default().rename("no_such_field", "x"));
    }

    #[test]
    fn the_in_place_profile_renames_what_was_not_renamed_and_back() {
        let mut f = FieldNames::default();
        f.rename("title_unique_b", "mine_i");
        f.set_profile(Profile::InPlace);
        assert_eq!(f.unique(Dimension::Exact), "exact_signature_unique_i");
        assert_eq!(f.unique(Dimension::Title), "mine_i");
        assert_eq!(f.count(Dimension::Near), Some("near_copies_i"));
        assert_eq!(f.near_group, "near_group_l");
        assert_eq!(f.shared(), None);
        assert!(f.numeric_flags());
        f.set_profile(Profile::Yacy);
        let mut want = FieldNames::default();
        want.rename("title_unique_b", "mine_i");
        assert_eq!(f, want);
        assert_eq!(FieldNames::default().profile_fields().len(), 11);
    }

    #[test]
    fn two_roles_on_one_field_are_found() {
        assert_eq!(FieldNames::default().shared(), None);
        let mut f = FieldNames::default();
        f.rename("exact_signature_l", "fuzzy_signature_l");
        assert_eq!(
            f.shared(),
            Some((
                "exact_signature_l",
                "fuzzy_signature_l",
                "fuzzy_signature_l".to_owned()
            ))
        );
        let mut f = FieldNames::default();
        f.rename("title", "t_s");
        f.rename("description_txt", "t_s");
        assert_eq!(
            f.shared(),
            Some(("title", "description_txt", "t_s".to_owned()))
        );
        // A swap gives each role a field of its own.
        let mut f = FieldNames::default();
        f.rename("title", "description_txt");
        f.rename("description_txt", "title");
        assert_eq!(f.shared(), None);
    }
}
