from ascend_doctor.parsers import clean_paste


def test_prompts_are_dropped_but_comments_kept():
    text = ("(venv) root@host:~# npu-smi info\n$npu-smi info\n[root@x ~]# cat /etc/hccn.conf\n# npu-smi info\n"
            "# version: 1.0\n# a comment line\naddress_0=1.2.3.4\r\n")
    assert clean_paste(text).splitlines() == ["# version: 1.0", "# a comment line", "address_0=1.2.3.4"]


def test_cat_n_numbering_with_tabs_or_spaces():
    assert clean_paste("     1\tVersion=24.1.rc3\n     2\tx=1\n") == "Version=24.1.rc3\nx=1\n"
    assert clean_paste("     1  Version=24.1.rc3\n     2  x=1\n") == "Version=24.1.rc3\nx=1\n"


def test_numbers_that_do_not_count_are_data():
    table = "0  910B3  OK\n1  910B3  OK\n"
    assert clean_paste(table) == table
    assert clean_paste("3  a\n4  b\n") == "3  a\n4  b\n"
