//! Placeholder: its owner replaces this file with the real example.

use kernel::prelude::*;

module! {
    type: Placeholder,
    name: "rust_const_refs_to_cell",
    authors: ["Rust for Linux Contributors"],
    description: "placeholder",
    license: "GPL",
}

struct Placeholder {
    numbers: [i32; 3],
}

impl kernel::Module for Placeholder {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("placeholder (init)");
        pr_info!("Am I built-in? {}", false);
        Ok(Placeholder {
            numbers: [72, 108, 200],
        })
    }
}

impl Drop for Placeholder {
    fn drop(&mut self) {
        pr_info!("My numbers are {:?}", self.numbers);
        pr_info!("placeholder (exit)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_init_and_exit() {
        let log = kernel::module::load_unload::<Placeholder>(&THIS_MODULE).unwrap();
        assert_eq!(
            log.as_str(),
            "[info] rust_const_refs_to_cell: placeholder (init)\n\
             [info] rust_const_refs_to_cell: Am I built-in? false\n\
             [info] rust_const_refs_to_cell: My numbers are [72, 108, 200]\n\
             [info] rust_const_refs_to_cell: placeholder (exit)\n"
        );
    }
}
