"""`python -m ascend_doctor` is the same as the `ascend-doctor` console script."""

from ascend_doctor.cli import main

if __name__ == "__main__":
    main()
