//! Which pictures a run view shows — the topology at one instant, the space-time diagram of
//! the run so far, or both — and the diagram's axis. Kept in the link (`view=`, `axis=`), so a
//! permalink opens on the same picture.

pub use coordlab_render::spacetime::Axis;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Picture {
    #[default]
    Topology,
    SpaceTime,
    Both,
}

impl Picture {
    pub const ALL: [Picture; 3] = [Picture::Topology, Picture::SpaceTime, Picture::Both];

    pub fn code(self) -> &'static str {
        match self {
            Picture::Topology => "topology",
            Picture::SpaceTime => "spacetime",
            Picture::Both => "both",
        }
    }

    pub fn from_code(code: &str) -> Option<Picture> {
        Picture::ALL.into_iter().find(|p| p.code() == code)
    }

    #[cfg(feature = "player")]
    pub fn label(self) -> &'static str {
        match self {
            Picture::Topology => "Topology",
            Picture::SpaceTime => "Space-time",
            Picture::Both => "Both",
        }
    }

    /// The next picture, for the `d` key.
    pub fn next(self) -> Picture {
        match self {
            Picture::Topology => Picture::SpaceTime,
            Picture::SpaceTime => Picture::Both,
            Picture::Both => Picture::Topology,
        }
    }

    pub fn shows_topology(self) -> bool {
        self != Picture::SpaceTime
    }

    pub fn shows_diagram(self) -> bool {
        self != Picture::Topology
    }
}

/// The pictures and the axis: what `view=` and `axis=` say in a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct View {
    pub picture: Picture,
    pub axis: Axis,
}

impl View {
    /// Reads one `view=` or `axis=` setting; `false` when the key is neither. A bad value
    /// leaves the default and says why.
    pub fn read(&mut self, key: &str, value: &str, notices: &mut Vec<String>) -> bool {
        match key {
            "view" => match Picture::from_code(value) {
                Some(p) => self.picture = p,
                None => notices.push(format!(
                    "“{value}” is not a view (topology, spacetime or both); showing the topology."
                )),
            },
            "axis" => match Axis::from_code(value) {
                Some(a) => self.axis = a,
                None => notices.push(format!(
                    "“{value}” is not an axis of the space-time diagram (time or order); using time."
                )),
            },
            _ => return false,
        }
        true
    }

    /// The link settings for this view, leaving out the defaults.
    pub fn link_parts(&self) -> Vec<String> {
        let mut parts = Vec::new();
        if self.picture != Picture::default() {
            parts.push(format!("view={}", self.picture.code()));
        }
        if self.axis != Axis::default() {
            parts.push(format!("axis={}", self.axis.code()));
        }
        parts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_reads_back_what_it_writes() {
        for picture in Picture::ALL {
            for axis in [Axis::Time, Axis::Order] {
                let view = View { picture, axis };
                let mut read = View::default();
                let mut notices = Vec::new();
                for part in view.link_parts() {
                    let (k, v) = part.split_once('=').unwrap();
                    assert!(read.read(k, v, &mut notices));
                }
                assert_eq!(read, view);
                assert!(notices.is_empty());
            }
        }
    }

    #[test]
    fn a_bad_value_keeps_the_default_and_says_so() {
        let mut view = View::default();
        let mut notices = Vec::new();
        assert!(view.read("view", "3d", &mut notices));
        assert!(view.read("axis", "log", &mut notices));
        assert!(!view.read("seed", "1", &mut notices));
        assert_eq!(view, View::default());
        assert_eq!(notices.len(), 2);
    }
}
