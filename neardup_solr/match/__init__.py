"""match"""
