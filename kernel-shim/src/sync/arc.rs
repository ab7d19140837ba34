//! Placeholder.
/// Placeholder.
pub struct Arc<T: ?Sized>(core::marker::PhantomData<T>);
/// Placeholder.
pub struct ArcBorrow<'a, T: ?Sized>(core::marker::PhantomData<&'a T>);
