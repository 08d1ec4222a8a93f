//! What each participant's card shows: the view half of a participant, one module per
//! participant kind under its family's folder.
